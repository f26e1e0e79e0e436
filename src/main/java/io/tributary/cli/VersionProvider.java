package io.tributary.cli;

import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: Tributary's version (from the jar's Maven metadata), Akka's and Java's. */
final class VersionProvider implements IVersionProvider {
  private static final String POM_PROPERTIES = "/META-INF/maven/io.tributary/tributary/pom.properties";

  @Override
  public String[] getVersion() {
    return new String[] {
      "Tributary " + tributaryVersion(),
      "Akka " + akka.Version.current() + ", Java " + System.getProperty("java.version")
    };
  }

  /** The version in the jar's {@code pom.properties}, or "(development build)" when run from classes. */
  static String tributaryVersion() {
    try (InputStream in = VersionProvider.class.getResourceAsStream(POM_PROPERTIES)) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        return p.getProperty("version", "(unknown version)");
      }
    } catch (Exception e) {
      // fall through
    }
    return "(development build)";
  }
}
