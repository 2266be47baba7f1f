// SPDX-License-Identifier: Apache-2.0
/*
 * The removal of a tree that never follows a symbolic link (the starter's, after
 * bwrap's end; RunDir.removeTree is the same in Java).
 */
#ifndef AGENT_SANDBOX_REMOVE_TREE_H
#define AGENT_SANDBOX_REMOVE_TREE_H

/* Removes an absolute path and everything below it, never following a link (see
 * remove_entry in remove_tree.c); its parent
 * is found as the kernel finds it. 0 when it is gone. */
int remove_tree(const char *path);

#endif
