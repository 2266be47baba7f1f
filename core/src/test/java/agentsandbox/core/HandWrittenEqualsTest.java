// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.aftercheck.GitAftercheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import org.junit.jupiter.api.Test;

/**
 * The records whose {@code equals} is written out (a generated one would link through method
 * handles on a run's path: docs/startup.md) tell apart two values that differ in any one
 * component: a component added later and forgotten in {@code equals} fails here.
 */
class HandWrittenEqualsTest {

    @Test
    void Every_Component_Counts_In_The_Written_Out_Equals() throws Exception {
        for (Class<?> type : new Class<?>[] {
                CommandRule.Preset.class,
                CommandRule.Script.class,
                CommandRule.Blocked.class,
                CommandRule.Unwrapped.class,
                Class.forName("agentsandbox.core.aftercheck.GitAftercheck$State")}) {
            RecordComponent[] components = type.getRecordComponents();
            Class<?>[] types = new Class<?>[components.length];
            for (int i = 0; i < components.length; i++) {
                types[i] = components[i].getType();
            }
            Constructor<?> make = type.getDeclaredConstructor(types);
            make.setAccessible(true);
            Object[] values = new Object[components.length];
            for (int i = 0; i < components.length; i++) {
                values[i] = sample(types[i], 0);
            }
            Object one = make.newInstance(values);
            assertThat(make.newInstance(values)).as(type.getName()).isEqualTo(one)
                    .hasSameHashCodeAs(one);
            for (int i = 0; i < components.length; i++) {
                Object[] other = values.clone();
                other[i] = sample(types[i], 1);
                assertThat(make.newInstance(other)).as("%s differing in %s", type.getName(), components[i].getName())
                        .isNotEqualTo(one);
            }
        }
    }

    private static Object sample(Class<?> type, int which) {
        if (type == long.class) {
            return (long) which;
        }
        if (type == int.class) {
            return which;
        }
        if (type == boolean.class) {
            return which == 1;
        }
        return "value " + which; // String and Object components
    }
}
