package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.tributary.client.ConsumerRecord;
import io.tributary.record.Header;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** How the console producer splits its input and how the console consumer prints records. Pure. */
class LineFormatTest {

  static List<String> lines(String input, boolean stripCr) throws IOException {
    LineReader reader = new LineReader(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), stripCr);
    List<String> result = new ArrayList<>();
    for (byte[] line = reader.readLine(); line != null; line = reader.readLine()) {
      result.add(new String(line, StandardCharsets.UTF_8));
    }
    return result;
  }

  @Test
  void linesEndAtNewlineAndALastLineNeedsNone() throws IOException {
    assertEquals(List.of("a", "", "b c", "last"), lines("a\n\nb c\nlast", true));
    assertEquals(List.of("a", "b"), lines("a\nb\n", true));
    assertEquals(List.of(), lines("", true));
    assertEquals(List.of(""), lines("\n", true));
  }

  @Test
  void carriageReturnIsDroppedOnlyWhenAsked() throws IOException {
    assertEquals(List.of("dos", "unix"), lines("dos\r\nunix\n", true));
    assertEquals(List.of("dos\r", "unix"), lines("dos\r\nunix\n", false));
  }

  @Test
  void longLinesSpanManyBuffers() throws IOException {
    String big = "x".repeat(200_000);
    assertEquals(List.of(big, "y"), lines(big + "\ny", true));
  }

  @Test
  void bytesAreKeptAsTheyAre() throws IOException {
    byte[] invalidUtf8 = {(byte) 0xff, (byte) 0xfe, 'a', '\n'};
    LineReader reader = new LineReader(new ByteArrayInputStream(invalidUtf8), true);
    assertArrayEquals(new byte[] {(byte) 0xff, (byte) 0xfe, 'a'}, reader.readLine());
    assertNull(reader.readLine());
  }

  @ParameterizedTest
  @CsvSource({"'k:v', ':', 1", "'k::v', '::', 1", "'kv', ':', -1", "'', ':', -1", "':', ':', 0"})
  void separatorIsFoundByBytes(String line, String sep, int expected) {
    assertEquals(expected, LineReader.indexOf(line.getBytes(StandardCharsets.UTF_8),
        sep.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void escapesInSeparatorsAreUnderstood() {
    assertEquals("\t", CliProperties.unescape("\\t"));
    assertEquals("a\nb\\", CliProperties.unescape("a\\nb\\\\"));
    assertEquals("\\x", CliProperties.unescape("\\x"));
  }

  static String format(Map<String, String> props, ConsumerRecord<byte[], byte[]> r) throws IOException {
    CommandLine cl = new CommandLine(new Main());
    RecordFormatter f = new RecordFormatter(new CliProperties(props, RecordFormatter.PROPERTIES, cl));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    f.write(r, out);
    return out.toString(StandardCharsets.UTF_8);
  }

  static ConsumerRecord<byte[], byte[]> record(String key, String value, List<Header> headers) {
    return new ConsumerRecord<>("t", 2, 17, 1_700_000_000_000L,
        key == null ? null : key.getBytes(StandardCharsets.UTF_8),
        value == null ? null : value.getBytes(StandardCharsets.UTF_8), headers);
  }

  @Test
  void valueOnlyByDefault() throws IOException {
    assertEquals("hello\n", format(Map.of(), record("k", "hello", List.of())));
  }

  @Test
  void prefixesComeInKafkasOrder() throws IOException {
    Map<String, String> all = new LinkedHashMap<>();
    all.put("print.key", "true");
    all.put("print.partition", "true");
    all.put("print.offset", "true");
    all.put("print.timestamp", "true");
    assertEquals("CreateTime:1700000000000\tPartition:2\tOffset:17\tk\tv\n", format(all, record("k", "v", List.of())));
  }

  @Test
  void keySeparatorAndNullLiteral() throws IOException {
    Map<String, String> props = Map.of("print.key", "true", "key.separator", ":", "null.literal", "<null>");
    assertEquals("<null>:v\n", format(props, record(null, "v", List.of())));
    assertEquals("k:<null>\n", format(props, record("k", null, List.of())));
  }

  @Test
  void headersArePrintedAsKafkaDoes() throws IOException {
    Map<String, String> props = Map.of("print.headers", "true");
    assertEquals("NO_HEADERS\tv\n", format(props, record("k", "v", List.of())));
    List<Header> headers = List.of(new Header("a", "1".getBytes(StandardCharsets.UTF_8)), new Header("b", null));
    assertEquals("a:1,b:null\tv\n", format(props, record("k", "v", headers)));
  }
}
