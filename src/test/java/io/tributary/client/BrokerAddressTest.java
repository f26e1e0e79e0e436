package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BrokerAddressTest {

  /** A node's Artery address is the literal it binds: a name is tried at its addresses first, then as given. */
  @Test
  void aHostNameIsAlsoTriedAtTheAddressesItResolvesTo() {
    List<BrokerAddress> forms = BrokerAddress.withResolvedForms(BrokerAddress.parseList("localhost:9092,10.1.2.3:9093"));
    assertEquals(new BrokerAddress("tributary", "localhost", 9092), forms.get(forms.size() - 2), forms.toString());
    assertEquals(new BrokerAddress("tributary", "10.1.2.3", 9093), forms.get(forms.size() - 1), forms.toString());
    org.junit.jupiter.api.Assertions.assertTrue(
        forms.indexOf(new BrokerAddress("tributary", "127.0.0.1", 9092)) >= 0, forms.toString());
    List<BrokerAddress> literals = BrokerAddress.parseList("127.0.0.1:9092,[::1]:9093");
    assertEquals(literals, BrokerAddress.withResolvedForms(literals));
    List<BrokerAddress> unknown = BrokerAddress.parseList("no-such-host.invalid:9092");
    assertEquals(unknown, BrokerAddress.withResolvedForms(unknown));
  }

  @Test
  void hostPortUsesTheDefaultSystemName() {
    BrokerAddress a = BrokerAddress.parse("127.0.0.1:9092");
    assertEquals(new BrokerAddress("tributary", "127.0.0.1", 9092), a);
    assertEquals("akka://tributary@127.0.0.1:9092/system/tributary-gateway", a.gatewayUri());
  }

  @Test
  void systemAtHostPortKeepsTheSystemName() {
    assertEquals(new BrokerAddress("prod-cluster", "broker1", 25520), BrokerAddress.parse("prod-cluster@broker1:25520"));
    assertEquals(new BrokerAddress("sys", "h", 1), BrokerAddress.parse("akka://sys@h:1"));
  }

  @Test
  void ipv6HostsGoInBrackets() {
    BrokerAddress a = BrokerAddress.parse("[::1]:9092");
    assertEquals("::1", a.host());
    assertEquals("[::1]:9092", a.hostPort());
    assertEquals("akka://tributary@[::1]:9092/system/tributary-gateway", a.gatewayUri());
  }

  @Test
  void listsAreCommaSeparatedInOrder() {
    List<BrokerAddress> list = BrokerAddress.parseList(" 127.0.0.1:1 , other@127.0.0.1:2,,");
    assertEquals(
        List.of(new BrokerAddress("tributary", "127.0.0.1", 1), new BrokerAddress("other", "127.0.0.1", 2)), list);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", ",", "host", "host:", ":9092", "host:port", "host:0", "host:70000", "::1:9092",
      "@host:1", "bad name@host:1", "[::1]9092"})
  void malformedEntriesAreRejected(String servers) {
    assertThrows(IllegalArgumentException.class, () -> BrokerAddress.parseList(servers));
  }
}
