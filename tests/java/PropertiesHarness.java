// Kafka's own reading of a .properties file (Utils.loadProps: java.util.Properties.load on the
// file's bytes, ISO-8859-1), for the differential tests of sasl_scram.config.
// Request: "load <bytes, base64>". Response: "ok <n> (<key> <value>){n}" with each string as
// its UTF-16BE code units in base64 (so lone surrogates from \\uXXXX escapes survive), or
// "err <class: message, base64>".
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Utils;

public class PropertiesHarness extends LineProtocol {
    static String utf16(String s) {
        // Each char's two bytes, by hand: getBytes(UTF_16BE) would replace a lone surrogate.
        byte[] out = new byte[2 * s.length()];
        for (int i = 0; i < s.length(); i++) {
            out[2 * i] = (byte) (s.charAt(i) >> 8);
            out[2 * i + 1] = (byte) s.charAt(i);
        }
        return enc(out);
    }

    public static void main(String[] args) throws Exception {
        Path file = Files.createTempFile("properties-harness", ".properties");
        file.toFile().deleteOnExit();
        serve(fields -> {
            if (!fields[0].equals("load")) throw new IllegalArgumentException("unknown request " + fields[0]);
            Files.write(file, dec(fields[1]));
            Properties props = Utils.loadProps(file.toString());
            Map<String, String> sorted = new TreeMap<>();
            for (String key : props.stringPropertyNames()) sorted.put(key, props.getProperty(key));
            StringBuilder out = new StringBuilder("ok ").append(sorted.size());
            for (Map.Entry<String, String> e : sorted.entrySet()) {
                out.append(' ').append(utf16(e.getKey())).append(' ').append(utf16(e.getValue()));
            }
            return out.toString();
        }, t -> t.getClass().getName() + ": " + t.getMessage());
    }
}
