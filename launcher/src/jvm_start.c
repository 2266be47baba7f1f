// SPDX-License-Identifier: Apache-2.0
/*
 * agent-sandbox-jvm: starts the tool's JVM in-process, in place of the runtime's
 * `java` program, which the launcher execs otherwise.
 *
 *   agent-sandbox-jvm [JVM options...] -cp CLASS_PATH MAIN_CLASS [arguments...]
 *
 * The same command line as `java` takes from the launcher, and the same result: it
 * loads the runtime's libjvm (lib/server/libjvm.so beside this program's bin/), creates
 * the JVM with the options and the class path, and calls MAIN_CLASS.main with the
 * arguments, on a thread of its own with the stack java gives it. What `java` does on top of
 * that is not needed here and costs every start 1 to 2 ms: its own library (libjli),
 * the parsing of options agent-sandbox never passes, and the Java code of its launcher
 * helper that finds and checks the main class. The arguments become Java strings as
 * `java` makes them (their bytes decoded as UTF-8, the launcher's locale, a byte that
 * is not UTF-8 becoming U+FFFD).
 *
 * Before main runs it registers the tool's native methods (NATIVE_CLASS, Native.java):
 * a SHA-1 (sha1.c), which the interpreted JVM computes far more slowly, the opening
 * of a directory through no symbolic link (openat2), which the JDK cannot do, and the
 * writing of a file into the host's git dir through no link (file_below.c), which the
 * JDK does at some ten times the cost in an interpreted JVM, and the walk and inotify
 * watch of the project's work tree for its git dirs (tree_watch.c), which the JDK does at
 * some ten times the cost too.
 *
 * agent-sandbox's main method ends the JVM itself (Runtime.halt); a main method that
 * returns, or a JVM that cannot be created, ends this program with status 1 after one
 * line on stderr.
 *
 * Linked dynamically with the C library (it loads libjvm), unlike the launcher.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "sha1.h"
#include "bytes.h"
#include "spawn.h"
#include "file_below.h"
#include "tree_watch.h"

#include <poll.h>

typedef jint(JNICALL *CreateJavaVM)(JavaVM **, void **, void *);

/* The stack java gives the JVM's main thread: the JVM's default for its threads
 * (ThreadStackSize) on Linux x86-64 and AArch64; agent-sandbox passes no -Xss. */
#define MAIN_STACK (1024 * 1024)

struct start {
    CreateJavaVM create;
    JavaVMInitArgs args;
    const char *main_class;
    char **arguments;
    int argument_count;
};

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "agent-sandbox: cannot start its JVM: %s%s%s; reinstall agent-sandbox (./install.sh)\n",
            what, detail == NULL ? "" : ": ", detail == NULL ? "" : detail);
    _exit(1);
}

/* A Java string of C bytes, decoded as UTF-8 with replacement, as `java` decodes arguments. */
static jstring decoded(JNIEnv *env, jclass string_class, jmethodID from_bytes, jobject utf8, const char *s) {
    jsize length = (jsize)strlen(s);
    jbyteArray bytes = (*env)->NewByteArray(env, length);
    if (bytes == NULL) {
        return NULL;
    }
    (*env)->SetByteArrayRegion(env, bytes, 0, length, (const jbyte *)s);
    jstring out = (jstring)(*env)->NewObject(env, string_class, from_bytes, bytes, utf8);
    (*env)->DeleteLocalRef(env, bytes);
    return out;
}

/* Native.sha1(byte[] data, int offset, int length): the SHA-1 of those bytes (sha1.c). */
static jbyteArray JNICALL native_sha1(JNIEnv *env, jclass owner, jbyteArray data, jint offset, jint length) {
    (void)owner;
    jsize size = data == NULL ? 0 : (*env)->GetArrayLength(env, data);
    if (data == NULL || offset < 0 || length < 0 || offset > size - length) {
        jclass bounds = (*env)->FindClass(env, "java/lang/IndexOutOfBoundsException");
        if (bounds != NULL) {
            (*env)->ThrowNew(env, bounds, "sha1: no such range of the array");
        }
        return NULL;
    }
    unsigned char digest[SHA1_LENGTH];
    jbyte *bytes = (*env)->GetPrimitiveArrayCritical(env, data, NULL);
    if (bytes == NULL) {
        return NULL; /* OutOfMemoryError thrown */
    }
    sha1((const unsigned char *)bytes + offset, (size_t)length, digest);
    (*env)->ReleasePrimitiveArrayCritical(env, data, bytes, JNI_ABORT);
    jbyteArray out = (*env)->NewByteArray(env, SHA1_LENGTH);
    if (out != NULL) {
        (*env)->SetByteArrayRegion(env, out, 0, SHA1_LENGTH, (const jbyte *)digest);
    }
    return out;
}

/* Native.firstDifference(byte[] a, int aFrom, byte[] b, int bFrom, int length): the offset of the
 * first byte in which those ranges differ, -1 when none does (bytes.c). */
static jint JNICALL native_first_difference(JNIEnv *env, jclass owner, jbyteArray a, jint a_from, jbyteArray b,
                                            jint b_from, jint length) {
    (void)owner;
    jsize a_size = a == NULL ? 0 : (*env)->GetArrayLength(env, a);
    jsize b_size = b == NULL ? 0 : (*env)->GetArrayLength(env, b);
    if (a == NULL || b == NULL || a_from < 0 || b_from < 0 || length < 0 || a_from > a_size - length
        || b_from > b_size - length) {
        jclass bounds = (*env)->FindClass(env, "java/lang/IndexOutOfBoundsException");
        if (bounds != NULL) {
            (*env)->ThrowNew(env, bounds, "firstDifference: no such range of the arrays");
        }
        return -1;
    }
    jbyte *x = (*env)->GetPrimitiveArrayCritical(env, a, NULL);
    if (x == NULL) {
        return -1; /* OutOfMemoryError thrown */
    }
    jbyte *y = (*env)->GetPrimitiveArrayCritical(env, b, NULL);
    if (y == NULL) {
        (*env)->ReleasePrimitiveArrayCritical(env, a, x, JNI_ABORT);
        return -1;
    }
    size_t at = first_difference((const unsigned char *)x + a_from, (const unsigned char *)y + b_from,
                                 (size_t)length);
    (*env)->ReleasePrimitiveArrayCritical(env, b, y, JNI_ABORT);
    (*env)->ReleasePrimitiveArrayCritical(env, a, x, JNI_ABORT);
    return at == (size_t)length ? -1 : (jint)at;
}

/* Native.openDirectory(byte[] path): a descriptor of that directory, opened as a path only,
 * never through a symbolic link on the way, closed on exec; the negated errno otherwise. */
static jint JNICALL native_open_directory(JNIEnv *env, jclass owner, jbyteArray path) {
    (void)owner;
    char name[PATH_MAX];
    jsize length = path == NULL ? 0 : (*env)->GetArrayLength(env, path);
    if (path == NULL || length <= 0 || length >= PATH_MAX) {
        return -ENAMETOOLONG;
    }
    (*env)->GetByteArrayRegion(env, path, 0, length, (jbyte *)name);
    name[length] = '\0';
    if (strlen(name) != (size_t)length) {
        return -EINVAL; /* a NUL inside */
    }
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, AT_FDCWD, name, &how, sizeof how);
    return fd >= 0 ? (jint)fd : -errno;
}

/* The NUL-ended strings of bytes (length bytes, each string ended by a NUL) as a NULL-ended
 * array in memory of its own (free it); NULL when they are not that, or out of memory. */
static char **split_nul_strings(char *bytes, jsize length) {
    size_t count = 0;
    for (jsize i = 0; i < length; i++) {
        count += bytes[i] == '\0';
    }
    if (length > 0 && bytes[length - 1] != '\0') {
        return NULL;
    }
    char **strings = calloc(count + 1, sizeof *strings);
    if (strings == NULL) {
        return NULL;
    }
    size_t n = 0;
    jsize start = 0;
    for (jsize i = 0; i < length; i++) {
        if (bytes[i] == '\0') {
            strings[n++] = bytes + start;
            start = i + 1;
        }
    }
    strings[n] = NULL;
    return strings;
}

/* The bytes of a Java byte array, NUL-ended, in memory of their own (free them); NULL with an
 * exception pending. */
static char *copied(JNIEnv *env, jbyteArray array, jsize *length) {
    *length = array == NULL ? 0 : (*env)->GetArrayLength(env, array);
    char *bytes = malloc((size_t)*length + 1);
    if (bytes == NULL) {
        jclass memory = (*env)->FindClass(env, "java/lang/OutOfMemoryError");
        if (memory != NULL) {
            (*env)->ThrowNew(env, memory, "run: no memory for the command line");
        }
        return NULL;
    }
    if (*length > 0) {
        (*env)->GetByteArrayRegion(env, array, 0, *length, (jbyte *)bytes);
    }
    bytes[*length] = '\0';
    return bytes;
}

/* A Java byte array of STATUS as 4 bytes (big-endian), then the USED bytes at DATA; NULL with an
 * exception pending. */
static jbyteArray status_and_bytes(JNIEnv *env, int status, const void *data, size_t used) {
    jbyteArray answer = (*env)->NewByteArray(env, (jsize)(used + 4));
    if (answer != NULL) {
        unsigned char head[4] = {(unsigned char)((unsigned int)status >> 24), (unsigned char)((unsigned int)status >> 16),
                                 (unsigned char)((unsigned int)status >> 8), (unsigned char)status};
        (*env)->SetByteArrayRegion(env, answer, 0, 4, (const jbyte *)head);
        if (used > 0) {
            (*env)->SetByteArrayRegion(env, answer, 4, (jsize)used, (const jbyte *)data);
        }
    }
    return answer;
}

/* The most bytes of a program's output that Native.run keeps. */
#define RUN_OUTPUT_MAX (1 << 20)

/* Native.run(byte[] argv, byte[] env, byte[] dir, int timeoutMillis): spawn.h's
 * spawn_and_wait, argv and env each given as NUL-ended strings; the answer is the status as
 * 4 bytes (big-endian), then the output, or for SPAWN_NOT_RUN the reason. */
static jbyteArray JNICALL native_run(JNIEnv *env, jclass owner, jbyteArray argv_bytes, jbyteArray env_bytes,
                                     jbyteArray dir_bytes, jint timeout_millis) {
    (void)owner;
    jsize argv_length;
    jsize env_length;
    jsize dir_length;
    char *argv_text = copied(env, argv_bytes, &argv_length);
    char *env_text = argv_text == NULL ? NULL : copied(env, env_bytes, &env_length);
    char *dir = env_text == NULL ? NULL : copied(env, dir_bytes, &dir_length);
    char **words = dir == NULL ? NULL : split_nul_strings(argv_text, argv_length);
    char **variables = dir == NULL ? NULL : split_nul_strings(env_text, env_length);
    char *output = dir == NULL ? NULL : malloc(RUN_OUTPUT_MAX);
    jbyteArray answer = NULL;
    if (output != NULL) {
        int status;
        size_t used = 0;
        if (words == NULL || words[0] == NULL || variables == NULL || strlen(dir) != (size_t)dir_length) {
            status = SPAWN_NOT_RUN;
            used = (size_t)snprintf(output, RUN_OUTPUT_MAX, "the command line is not one");
        } else {
            status = spawn_and_wait(words, variables, dir, timeout_millis, output, RUN_OUTPUT_MAX, &used);
            if (status == SPAWN_NOT_RUN) {
                used = (size_t)snprintf(output, RUN_OUTPUT_MAX, "%s", strerror(errno));
            }
        }
        answer = status_and_bytes(env, status, output, used);
    } else if (dir != NULL) {
        jclass memory = (*env)->FindClass(env, "java/lang/OutOfMemoryError");
        if (memory != NULL) {
            (*env)->ThrowNew(env, memory, "run: no memory for the output");
        }
    }
    free(variables);
    free(words);
    free(output);
    free(dir);
    free(env_text);
    free(argv_text);
    return answer;
}

/* Native.replaceFile(byte[] root, byte[] rel, byte[] temp, byte[] name, byte[] data, int mode):
 * file_below.h's replace_file_below; an IOException that names the file and the system's
 * reason when it fails (and nothing is left of the temporary file). */
static void JNICALL native_replace_file(JNIEnv *env, jclass owner, jbyteArray root_bytes, jbyteArray rel_bytes,
                                        jbyteArray temp_bytes, jbyteArray name_bytes, jbyteArray data, jint mode) {
    (void)owner;
    jsize root_length;
    jsize rel_length;
    jsize temp_length;
    jsize name_length;
    char *root = copied(env, root_bytes, &root_length);
    char *rel = root == NULL ? NULL : copied(env, rel_bytes, &rel_length);
    char *temp = rel == NULL ? NULL : copied(env, temp_bytes, &temp_length);
    char *name = temp == NULL ? NULL : copied(env, name_bytes, &name_length);
    if (name != NULL) {
        int result = -EINVAL;
        jbyte *bytes = NULL;
        jsize length = data == NULL ? 0 : (*env)->GetArrayLength(env, data);
        /* a NUL inside a name would cut it short */
        if (data != NULL && strlen(root) == (size_t)root_length && strlen(rel) == (size_t)rel_length
            && strlen(temp) == (size_t)temp_length && strlen(name) == (size_t)name_length) {
            bytes = (*env)->GetByteArrayElements(env, data, NULL);
            if (bytes == NULL) {
                result = 0; /* OutOfMemoryError thrown */
            } else {
                result = replace_file_below(root, rel, temp, name, (const unsigned char *)bytes, (size_t)length,
                                            (mode_t)mode);
                (*env)->ReleaseByteArrayElements(env, data, bytes, JNI_ABORT);
            }
        }
        if (result < 0) {
            char message[PATH_MAX + 256];
            snprintf(message, sizeof message, "%s%s%s: %s", rel, rel[0] == '\0' ? "" : "/", name, strerror(-result));
            jclass io = (*env)->FindClass(env, "java/io/IOException");
            if (io != NULL) {
                (*env)->ThrowNew(env, io, message);
            }
        }
    }
    free(name);
    free(temp);
    free(rel);
    free(root);
}

/* Native.watchOpen(): a new inotify instance, non-blocking, closed on exec; the negated errno
 * when there is none to be had. */
static jint JNICALL native_watch_open(JNIEnv *env, jclass owner) {
    (void)env;
    (void)owner;
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/* The most directories one Native.watchWalk lists. */
#define WATCH_WALK_MAX ((size_t)1 << 24)

/* Native.watchWalk(int inotify, byte[] root, byte[] start, byte[] skip, int max, int idleMillis):
 * tree_watch.h's tree_watch_walk; its result as 4 bytes (big-endian), then its records. */
static jbyteArray JNICALL native_watch_walk(JNIEnv *env, jclass owner, jint inotify, jbyteArray root_bytes,
                                            jbyteArray start_bytes, jbyteArray skip_bytes, jint max,
                                            jint idle_millis) {
    (void)owner;
    jsize root_length;
    jsize start_length;
    jsize skip_length;
    char *root = copied(env, root_bytes, &root_length);
    char *start = root == NULL ? NULL : copied(env, start_bytes, &start_length);
    char *skip = start == NULL ? NULL : copied(env, skip_bytes, &skip_length);
    jbyteArray answer = NULL;
    if (skip != NULL) {
        struct tree_records records = {NULL, 0, 0};
        int result = -EINVAL;
        if (strlen(root) == (size_t)root_length && strlen(start) == (size_t)start_length) {
            result = tree_watch_walk(root, start, inotify, skip, (size_t)skip_length,
                                     max <= 0 ? WATCH_WALK_MAX : (size_t)max, idle_millis, &records);
        }
        answer = status_and_bytes(env, result, records.data, result < 0 ? 0 : records.used);
        free(records.data);
    }
    free(skip);
    free(start);
    free(root);
    return answer;
}

/* The most bytes of events one Native.watchRead returns. */
#define WATCH_READ_MAX (256 * 1024)

/* Native.watchRead(int inotify): the events waiting there (struct inotify_event, one after the
 * other, in this machine's byte order), none when there are none; null when the instance
 * cannot be read. */
static jbyteArray JNICALL native_watch_read(JNIEnv *env, jclass owner, jint inotify) {
    (void)owner;
    char *buffer = malloc(WATCH_READ_MAX);
    if (buffer == NULL) {
        return NULL;
    }
    size_t used = 0;
    int failed = 0;
    while (WATCH_READ_MAX - used >= sizeof(struct inotify_event) + NAME_MAX + 1) {
        ssize_t n = read(inotify, buffer + used, WATCH_READ_MAX - used);
        if (n > 0) {
            used += (size_t)n;
        } else {
            failed = n < 0 && errno != EAGAIN && errno != EINTR;
            break;
        }
    }
    jbyteArray answer = NULL;
    if (!failed) {
        answer = (*env)->NewByteArray(env, (jsize)used);
        if (answer != NULL && used > 0) {
            (*env)->SetByteArrayRegion(env, answer, 0, (jsize)used, (const jbyte *)buffer);
        }
    }
    free(buffer);
    return answer;
}

/* Native.watchWait(int inotify, int millis): 1 when events wait there, 0 when none came in
 * MILLIS, the negated errno when it cannot be waited on. */
static jint JNICALL native_watch_wait(JNIEnv *env, jclass owner, jint inotify, jint millis) {
    (void)env;
    (void)owner;
    struct pollfd poll_fd = {inotify, POLLIN, 0};
    int n = poll(&poll_fd, 1, millis);
    return n < 0 ? (errno == EINTR ? 0 : -errno) : n > 0;
}

/* Native.watchHold(int inotify): tree_watch.h's tree_watch_hold. */
static jint JNICALL native_watch_hold(JNIEnv *env, jclass owner, jint inotify) {
    (void)env;
    (void)owner;
    return tree_watch_hold(inotify);
}

/* Native.closeDescriptor(int fd). */
static void JNICALL native_close_descriptor(JNIEnv *env, jclass owner, jint fd) {
    (void)env;
    (void)owner;
    close(fd);
}

/* A JNI method of the function FUNCTION, which JNI takes as a data pointer: copied, as ISO C
 * allows no cast between the two. */
#define METHOD(entry, method_name, method_signature, function)                   \
    do {                                                                         \
        void *pointer_;                                                          \
        memcpy(&pointer_, &(function), sizeof pointer_);                          \
        (entry).name = (char *)(method_name);                                    \
        (entry).signature = (char *)(method_signature);                          \
        (entry).fnPtr = pointer_;                                                \
    } while (0)

/* The tool's native methods (NATIVE_CLASS), registered before main runs; a class path
 * without that class (a JVM started for something else) goes on without them. */
static void register_natives(JNIEnv *env) {
    jclass owner = (*env)->FindClass(env, NATIVE_CLASS);
    if (owner == NULL) {
        (*env)->ExceptionClear(env);
        return;
    }
    jbyteArray(JNICALL *sha1_function)(JNIEnv *, jclass, jbyteArray, jint, jint) = native_sha1;
    jint(JNICALL *open_function)(JNIEnv *, jclass, jbyteArray) = native_open_directory;
    jbyteArray(JNICALL *run_function)(JNIEnv *, jclass, jbyteArray, jbyteArray, jbyteArray, jint) = native_run;
    jint(JNICALL *difference_function)(JNIEnv *, jclass, jbyteArray, jint, jbyteArray, jint, jint) =
        native_first_difference;
    void(JNICALL *replace_function)(JNIEnv *, jclass, jbyteArray, jbyteArray, jbyteArray, jbyteArray, jbyteArray,
                                    jint) = native_replace_file;
    jint(JNICALL *watch_open_function)(JNIEnv *, jclass) = native_watch_open;
    jbyteArray(JNICALL *watch_walk_function)(JNIEnv *, jclass, jint, jbyteArray, jbyteArray, jbyteArray, jint,
                                             jint) = native_watch_walk;
    jbyteArray(JNICALL *watch_read_function)(JNIEnv *, jclass, jint) = native_watch_read;
    jint(JNICALL *watch_wait_function)(JNIEnv *, jclass, jint, jint) = native_watch_wait;
    void(JNICALL *close_function)(JNIEnv *, jclass, jint) = native_close_descriptor;
    jint(JNICALL *watch_hold_function)(JNIEnv *, jclass, jint) = native_watch_hold;
    JNINativeMethod methods[11];
    METHOD(methods[0], "sha1", "([BII)[B", sha1_function);
    METHOD(methods[1], "openDirectory", "([B)I", open_function);
    METHOD(methods[2], "run", "([B[B[BI)[B", run_function);
    METHOD(methods[3], "firstDifference", "([BI[BII)I", difference_function);
    METHOD(methods[4], "replaceFile", "([B[B[B[B[BI)V", replace_function);
    METHOD(methods[5], "watchOpen", "()I", watch_open_function);
    METHOD(methods[6], "watchWalk", "(I[B[B[BII)[B", watch_walk_function);
    METHOD(methods[7], "watchRead", "(I)[B", watch_read_function);
    METHOD(methods[8], "watchWait", "(II)I", watch_wait_function);
    METHOD(methods[9], "closeDescriptor", "(I)V", close_function);
    METHOD(methods[10], "watchHold", "(I)I", watch_hold_function);
    if ((*env)->RegisterNatives(env, owner, methods, 11) != 0) {
        (*env)->ExceptionClear(env);
    }
    (*env)->DeleteLocalRef(env, owner);
}

static void *run(void *argument) {
    struct start *start = argument;
    JavaVM *vm = NULL;
    JNIEnv *env = NULL;
    if (start->create(&vm, (void **)&env, &start->args) != JNI_OK) {
        fail("the JVM could not be created", NULL);
    }
    register_natives(env);
    jclass main_class = (*env)->FindClass(env, start->main_class);
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    jclass charsets = (*env)->FindClass(env, "java/nio/charset/StandardCharsets");
    if (main_class == NULL || string_class == NULL || charsets == NULL) {
        fail("a class is missing", start->main_class);
    }
    jmethodID main_method = (*env)->GetStaticMethodID(env, main_class, "main", "([Ljava/lang/String;)V");
    jmethodID from_bytes = (*env)->GetMethodID(env, string_class, "<init>", "([BLjava/nio/charset/Charset;)V");
    jfieldID utf8_field = (*env)->GetStaticFieldID(env, charsets, "UTF_8", "Ljava/nio/charset/Charset;");
    if (main_method == NULL || from_bytes == NULL || utf8_field == NULL) {
        fail("no main method", start->main_class);
    }
    jobject utf8 = (*env)->GetStaticObjectField(env, charsets, utf8_field);
    jobjectArray arguments = (*env)->NewObjectArray(env, start->argument_count, string_class, NULL);
    if (utf8 == NULL || arguments == NULL) {
        fail("out of memory", NULL);
    }
    for (int i = 0; i < start->argument_count; i++) {
        jstring s = decoded(env, string_class, from_bytes, utf8, start->arguments[i]);
        if (s == NULL) {
            fail("out of memory", NULL);
        }
        (*env)->SetObjectArrayElement(env, arguments, i, s);
        (*env)->DeleteLocalRef(env, s);
    }
    (*env)->CallStaticVoidMethod(env, main_class, main_method, arguments);
    /* agent-sandbox's main ends the JVM itself: here only if it did not */
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        fail("its main method failed", start->main_class);
    }
    fail("its main method returned", start->main_class);
    return NULL;
}

int main(int argc, char **argv) {
    /* bin/agent-sandbox-jvm of the runtime: its libjvm is ../lib/server/libjvm.so */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fail("cannot find its own program", NULL);
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL) {
        fail("cannot find its own program", self);
    }
    *slash = '\0';
    char library[PATH_MAX];
    if (snprintf(library, sizeof library, "%s/../lib/server/libjvm.so", self) >= (int)sizeof library) {
        fail("the runtime's path is too long", self);
    }
    void *jvm = dlopen(library, RTLD_NOW | RTLD_GLOBAL);
    if (jvm == NULL) {
        fail("cannot load libjvm", dlerror());
    }

    static struct start start;
    /* dlsym's object pointer as a function pointer, the way POSIX allows */
    void *create = dlsym(jvm, "JNI_CreateJavaVM");
    memcpy(&start.create, &create, sizeof create);
    if (create == NULL) {
        fail("libjvm has no invocation interface", library);
    }

    /* options up to -cp, the class path as java.class.path, then the main class */
    JavaVMOption *options = calloc((size_t)argc + 1, sizeof *options);
    char *class_path = NULL;
    if (options == NULL) {
        fail("out of memory", NULL);
    }
    int count = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-cp") == 0 || strcmp(argv[i], "-classpath") == 0) {
            if (i + 1 >= argc) {
                fail("no class path after", argv[i]);
            }
            size_t size = strlen(argv[i + 1]) + sizeof "-Djava.class.path=";
            class_path = malloc(size);
            if (class_path == NULL) {
                fail("out of memory", NULL);
            }
            snprintf(class_path, size, "-Djava.class.path=%s", argv[i + 1]);
            options[count++].optionString = class_path;
            i++;
        } else {
            options[count++].optionString = argv[i];
        }
    }
    if (i >= argc) {
        fail("no main class given", NULL);
    }
    /* the main class as JNI names it: agentsandbox/cli/Main */
    char *main_class = strdup(argv[i]);
    if (main_class == NULL) {
        fail("out of memory", NULL);
    }
    for (char *c = main_class; *c != '\0'; c++) {
        if (*c == '.') {
            *c = '/';
        }
    }
    start.main_class = main_class;
    start.arguments = argv + i + 1;
    start.argument_count = argc - i - 1;
    start.args.version = JNI_VERSION_21;
    start.args.options = options;
    start.args.nOptions = count;
    start.args.ignoreUnrecognized = JNI_FALSE;

    /* the JVM's main thread on a thread of its own, as java runs it: the process's first
     * thread has a stack the JVM does not size or guard as its own */
    pthread_attr_t attributes;
    pthread_t thread;
    if (pthread_attr_init(&attributes) != 0 || pthread_attr_setstacksize(&attributes, MAIN_STACK) != 0 ||
        pthread_create(&thread, &attributes, run, &start) != 0) {
        fail("cannot make its main thread", NULL);
    }
    pthread_join(thread, NULL);
    return 1;
}
