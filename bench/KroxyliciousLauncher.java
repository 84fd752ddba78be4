/*
 * Kroxylicious's proxy as its kroxylicious-app main starts it, less the
 * command line (picocli), the banner and the version lines: parse the YAML
 * configuration with ConfigParser, build KafkaProxy with the default features
 * (what the app gets when no KROXYLICIOUS_UNLOCK_ variable is set), start it
 * and block. bench/_kroxylicious.py compiles this against the runtime's jars
 * at bench time and waits for the "ready" line on stdout, which the app does
 * not print: startup() returns once every gateway's ports are bound.
 */

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import io.kroxylicious.proxy.KafkaProxy;
import io.kroxylicious.proxy.config.ConfigParser;
import io.kroxylicious.proxy.config.Configuration;
import io.kroxylicious.proxy.internal.config.Features;

public final class KroxyliciousLauncher {
    private KroxyliciousLauncher() {
    }

    public static void main(String[] args) throws Exception {
        ConfigParser parser = new ConfigParser();
        Configuration config;
        try (InputStream stream = Files.newInputStream(Path.of(args[0]))) {
            config = parser.parseConfiguration(stream);
        }
        try (KafkaProxy proxy = new KafkaProxy(parser, config, Features.builder().build())) {
            proxy.startup();
            System.out.println("ready");
            System.out.flush();
            proxy.block();
        }
    }
}
