package io.github.hedge.cassandra.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * docs/reliability.md shows what its raw output says: every generated section equals what {@link
 * ReliabilityDoc} computes from the raw files the doc names. No cluster needed (a unit test).
 * {@code -Dhedge.it.writeDoc=true} rewrites the doc's sections and plots instead of checking them.
 */
class ReliabilityDocTest {
    @Test
    void should_equal_what_its_raw_output_computes_when_the_doc_shows_the_suites_figures() throws Exception {
        if (Boolean.getBoolean("hedge.it.writeDoc")) {
            ReliabilityDoc.write();
        }
        String doc = Files.readString(ReliabilityDoc.DOC);
        assertThat(doc)
                .as(
                        "docs/reliability.md vs its raw output %s (rewrite with -Dhedge.it.writeDoc=true)",
                        ReliabilityDoc.rawDir(doc))
                .isEqualTo(ReliabilityDoc.render(doc));
    }
}
