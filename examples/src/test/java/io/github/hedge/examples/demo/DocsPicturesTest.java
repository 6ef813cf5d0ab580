package io.github.hedge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every picture the docs show ({@code ![..](path)} in README.md and docs/*.md) exists and decodes in
 * headless chromium to a non-empty image: a page that loads each one reports its natural size.
 */
class DocsPicturesTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    static List<Path> pictures() throws Exception {
        List<Path> markdown = new ArrayList<>();
        markdown.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(markdown::add);
        }
        List<Path> out = new ArrayList<>();
        Pattern image = Pattern.compile("!\\[[^]]*]\\(([^)\\s]+)\\)");
        for (Path md : markdown) {
            Matcher m = image.matcher(Files.readString(md));
            while (m.find()) {
                String target = m.group(1);
                if (!target.startsWith("http")) {
                    out.add(md.getParent().resolve(target).normalize());
                }
            }
        }
        return out;
    }

    @Test
    void should_find_every_picture_the_docs_show_when_reading_the_markdown() throws Exception {
        List<Path> pictures = pictures();
        assertThat(pictures).isNotEmpty();
        assertThat(pictures).allSatisfy(p -> assertThat(p).isRegularFile());
    }

    @Test
    void should_decode_every_picture_to_a_non_empty_image_when_chromium_loads_it() throws Exception {
        Chromium.assumeInstalled();
        List<Path> pictures = pictures();
        StringBuilder html = new StringBuilder("<!DOCTYPE html><html><body>\n");
        for (int i = 0; i < pictures.size(); i++) {
            html.append("<img id=\"p")
                    .append(i)
                    .append("\" src=\"")
                    .append(pictures.get(i).toUri())
                    .append("\">\n");
        }
        html.append("<output id=\"sizes\">pending</output><script>\n"
                + "window.addEventListener('load', () => {\n"
                + "  document.getElementById('sizes').textContent = 'sizes ' + Array.from(document.images)\n"
                + "    .map(i => i.naturalWidth + 'x' + i.naturalHeight).join(' ');\n"
                + "});\n</script></body></html>\n");
        Path page = dir.resolve("pictures.html");
        Files.writeString(page, html);
        String dom = Chromium.dumpDom(page, dir.resolve("profile"));
        Matcher m = Pattern.compile("sizes ([0-9x ]+)<").matcher(dom);
        assertThat(m.find()).as("the page reported sizes; DOM:%n%s", dom).isTrue();
        String[] sizes = m.group(1).trim().split(" ");
        assertThat(sizes).hasSize(pictures.size());
        for (int i = 0; i < sizes.length; i++) {
            String[] wh = sizes[i].split("x");
            assertThat(Integer.parseInt(wh[0]) * Integer.parseInt(wh[1]))
                    .as("%s decoded as %s", pictures.get(i), sizes[i])
                    .isGreaterThan(100 * 100);
        }
    }
}
