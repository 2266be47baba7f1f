// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BoundsTest {
    @Test
    void Sizes_Take_Bytes_And_Binary_Suffixes() {
        assertThat(Bounds.parseSize("--tmp-size", "1048576", 1)).isEqualTo(1L << 20);
        assertThat(Bounds.parseSize("--tmp-size", "512M", 1)).isEqualTo(512L << 20);
        assertThat(Bounds.parseSize("--tmp-size", "2G", 1)).isEqualTo(2L << 30);
        assertThat(Bounds.parseSize("--tmp-size", "2GiB", 1)).isEqualTo(2L << 30);
        assertThat(Bounds.parseSize("--tmp-size", "64k", 1)).isEqualTo(64L << 10);
        assertThat(Bounds.parseSize("--tmp-size", "1T", 1)).isEqualTo(1L << 40);
    }

    @Test
    void Bad_Sizes_Say_What_Is_Expected_And_Small_Ones_The_Least_Accepted() {
        for (String bad : new String[] {"abc", "-1", "", "1.5G", "G", "99999999999999999999", "9999999999T"}) {
            assertThatThrownBy(() -> Bounds.parseSize("--tmp-size", bad, 1))
                    .hasMessageStartingWith("--tmp-size " + bad + ": expected a size");
        }
        assertThatThrownBy(() -> Bounds.parseSize("--tmp-size", "0", Bounds.MIN_TMP_SIZE))
                .hasMessage("--tmp-size 0: too small, a sandbox needs at least 1M; give 1M or more");
    }

    @Test
    void Counts_Are_Whole_Numbers_Of_At_Least_The_Minimum() {
        assertThat(Bounds.parseCount("--max-procs", "1024")).isEqualTo(1024);
        assertThatThrownBy(() -> Bounds.parseCount("--max-procs", "-1")).hasMessageContaining("expected a whole number");
        assertThatThrownBy(() -> Bounds.parseCount("--max-procs", "15")).hasMessageContaining("too few");
    }

    @Test
    void A_Later_Layer_Wins_Per_Bound_And_Defaults_Fill_The_Rest() {
        Bounds merged = new Bounds(null, 64L, null).over(new Bounds(8L << 20, 128L, null));
        assertThat(merged).isEqualTo(new Bounds(8L << 20, 64L, null));
        Bounds full = merged.withDefaults();
        assertThat(full.tmpSize()).isEqualTo(8L << 20);
        assertThat(full.maxProcs()).isEqualTo(64L);
        assertThat(full.maxMemory()).isGreaterThanOrEqualTo(Bounds.MIN_MEMORY);
        assertThat(Bounds.NONE.withDefaults().tmpSize()).isEqualTo(2L << 30);
        assertThat(Bounds.NONE.withDefaults().maxProcs()).isEqualTo(4096);
    }

    @Test
    void Sizes_Read_Back_For_People() {
        assertThat(Bounds.human(4L << 30)).isEqualTo("4G");
        assertThat(Bounds.human(1536L << 10)).isEqualTo("1536K");
        assertThat(Bounds.human(1000)).isEqualTo("1000");
    }
}
