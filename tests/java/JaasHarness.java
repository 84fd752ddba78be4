import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StreamTokenizer;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.URIParameter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.AppConfigurationEntry.LoginModuleControlFlag;
import javax.security.auth.login.Configuration;

import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

/**
 * Differential peer for the Python {@code jaas} package.
 *
 * <p>Requests (one per line, fields separated by spaces, strings base64):
 * <ul>
 *   <li>{@code P <value>}: {@code JaasContext.loadClientContext} on a {@code sasl.jaas.config} value.</li>
 *   <li>{@code F <text> <n> (<name> <value>){n}}: the JDK's {@code JavaLoginConfig} on a file
 *       with the given system properties set for the call.</li>
 * </ul>
 * Responses: {@code OK ...} with the parsed entries, or {@code ERR <class> <message>}.
 * A Java null is sent as {@code !}.
 */
public final class JaasHarness {
    private static final Base64.Decoder DEC = Base64.getDecoder();
    private static final Base64.Encoder ENC = Base64.getEncoder();

    private JaasHarness() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        Path dir = Files.createTempDirectory("jaas-harness");
        Path file = dir.resolve("jaas.conf");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ", -1);
            String response;
            try {
                switch (f[0]) {
                    case "P":
                        response = property(str(f[1]));
                        break;
                    case "F":
                        response = file(f, file);
                        break;
                    default:
                        response = "ERR " + b64("protocol") + " " + b64("unknown request " + f[0]);
                }
            } catch (Throwable t) {
                response = "ERR " + b64("harness") + " " + b64(String.valueOf(t));
            }
            out.print(response + "\n");
            out.flush();
        }
        Files.deleteIfExists(file);
        Files.deleteIfExists(dir);
    }

    private static String str(String field) {
        return field.equals("-") ? "" : new String(DEC.decode(field), StandardCharsets.UTF_8);
    }

    private static String b64(String s) {
        if (s == null) {
            return "!";
        }
        String e = ENC.encodeToString(s.getBytes(StandardCharsets.UTF_8));
        return e.isEmpty() ? "-" : e;
    }

    private static String flag(LoginModuleControlFlag flag) {
        if (flag == LoginModuleControlFlag.REQUIRED) {
            return "REQUIRED";
        } else if (flag == LoginModuleControlFlag.REQUISITE) {
            return "REQUISITE";
        } else if (flag == LoginModuleControlFlag.SUFFICIENT) {
            return "SUFFICIENT";
        } else if (flag == LoginModuleControlFlag.OPTIONAL) {
            return "OPTIONAL";
        }
        return "UNKNOWN";
    }

    private static void entry(StringBuilder sb, AppConfigurationEntry e) {
        sb.append(' ').append(b64(e.getLoginModuleName())).append(' ').append(flag(e.getControlFlag()));
        Map<String, ?> options = e.getOptions();
        sb.append(' ').append(options.size());
        for (Map.Entry<String, ?> o : options.entrySet()) {
            sb.append(' ').append(b64(o.getKey())).append(' ').append(b64((String) o.getValue()));
        }
    }

    private static String error(Throwable t) {
        return "ERR " + b64(t.getClass().getName()) + " " + b64(t.getMessage());
    }

    private static String property(String value) {
        Map<String, Object> configs = new HashMap<>();
        configs.put("sasl.jaas.config", new Password(value));
        JaasContext context;
        try {
            context = JaasContext.loadClientContext(configs);
        } catch (RuntimeException e) {
            return error(e);
        }
        StringBuilder sb = new StringBuilder("OK ").append(b64(context.name()));
        List<AppConfigurationEntry> entries = context.configurationEntries();
        sb.append(' ').append(entries.size());
        for (AppConfigurationEntry e : entries) {
            entry(sb, e);
        }
        return sb.toString();
    }

    private static String file(String[] f, Path file) throws Exception {
        String text = str(f[1]);
        int n = Integer.parseInt(f[2]);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String name = str(f[3 + 2 * i]);
            names.add(name);
            System.setProperty(name, str(f[4 + 2 * i]));
        }
        try {
            Files.write(file, text.getBytes(StandardCharsets.UTF_8));
            Configuration config;
            try {
                config = Configuration.getInstance("JavaLoginConfig", new URIParameter(file.toUri()));
            } catch (Exception e) {
                Throwable root = e;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                return error(root);
            }
            // Configuration cannot list its contexts, so ask for every string the JDK's own
            // tokenizer (set up as ConfigFile sets it up) sees in the file, plus null.
            StringBuilder sb = new StringBuilder("OK");
            int count = 0;
            StringBuilder body = new StringBuilder();
            for (String candidate : candidates(text)) {
                AppConfigurationEntry[] entries = config.getAppConfigurationEntry(candidate);
                if (entries == null) {
                    continue;
                }
                count++;
                body.append(' ').append(b64(candidate)).append(' ').append(entries.length);
                for (AppConfigurationEntry e : entries) {
                    entry(body, e);
                }
            }
            return sb.append(' ').append(count).append(body).toString();
        } finally {
            for (String name : names) {
                System.clearProperty(name);
            }
        }
    }

    private static Set<String> candidates(String text) throws Exception {
        StreamTokenizer st = new StreamTokenizer(new StringReader(text));
        st.quoteChar('"');
        st.wordChars('$', '$');
        st.wordChars('_', '_');
        st.wordChars('-', '-');
        st.wordChars('*', '*');
        st.slashSlashComments(true);
        st.slashStarComments(true);
        Set<String> out = new LinkedHashSet<>();
        out.add(null);
        while (st.nextToken() != StreamTokenizer.TT_EOF) {
            if (st.sval != null) {
                out.add(st.sval);
            }
        }
        return out;
    }
}
