// Answers authorization questions with Kafka's own StandardAuthorizer, for
// generate.py, which records the answers as vectors the tests replay.
//
// Input, one command a line, fields separated by spaces, strings base64-encoded:
//   CASE <allowEveryone:true|false> <superUsers>
//   ACL <type> <name> <patternType> <principal> <host> <operation> <permission>
//   ASK <principalType> <principalName> <host> <operation> <type> <name>
//   BYTYPE <principalType> <principalName> <host> <operation> <type>
//   MATCH <filterType> <filterName|-> <filterPattern> <principal|-> <host|-> <op> <perm>
//         (against every ACL of the current case, in order)
//   TEXT  (prints the toString of every ACL of the case and of ANY filters)
//   ORDER (prints the index of each ACL in the order StandardAuthorizer.acls lists them)
// Output: one line per ASK, BYTYPE, MATCH, TEXT and ORDER command; a question Kafka
// fails on answers ERROR:<exception class>.

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

public class AuthorizerVectors {
    private static String text(String field) {
        return field.equals("-") ? "" : new String(Base64.getDecoder().decode(field), StandardCharsets.UTF_8);
    }

    private static String b64(String value) {
        String encoded = Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
        return encoded.isEmpty() ? "-" : encoded;
    }

    private static AuthorizableRequestContext context(KafkaPrincipal principal, String host) throws Exception {
        InetAddress address = InetAddress.getByName(host);
        return new AuthorizableRequestContext() {
            public String listenerName() { return "EXTERNAL"; }
            public SecurityProtocol securityProtocol() { return SecurityProtocol.SASL_SSL; }
            public KafkaPrincipal principal() { return principal; }
            public InetAddress clientAddress() { return address; }
            public int requestType() { return 3; }
            public int requestVersion() { return 12; }
            public String clientId() { return "vectors"; }
            public int correlationId() { return 1; }
        };
    }

    private static StandardAuthorizer authorizer(boolean allowEveryone, String superUsers, List<StandardAcl> acls) throws Exception {
        StandardAuthorizer authorizer = new StandardAuthorizer();
        Map<String, Object> configs = new HashMap<>();
        configs.put("allow.everyone.if.no.acl.found", Boolean.toString(allowEveryone));
        configs.put("super.users", superUsers);
        authorizer.configure(configs);
        try {  // Kafka 4.x counts decisions in plugin metrics, which must be set.
            Class<?> impl = Class.forName("org.apache.kafka.common.metrics.internals.PluginMetricsImpl");
            Object metrics = impl.getConstructor(org.apache.kafka.common.metrics.Metrics.class, Map.class)
                .newInstance(new org.apache.kafka.common.metrics.Metrics(), new HashMap<String, String>());
            authorizer.getClass().getMethod("withPluginMetrics",
                Class.forName("org.apache.kafka.common.metrics.PluginMetrics")).invoke(authorizer, metrics);
        } catch (ClassNotFoundException e) {
            // 3.9 has no plugin metrics.
        }
        Map<Uuid, StandardAcl> byId = new HashMap<>();
        for (StandardAcl acl : acls) byId.put(Uuid.randomUuid(), acl);
        authorizer.loadSnapshot(byId);
        authorizer.completeInitialLoad();
        return authorizer;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        // The audit line (which names the deciding rule) goes to a buffer per question.
        ByteArrayOutputStream audit = new ByteArrayOutputStream();
        PrintStream errors = System.err;
        System.setErr(new PrintStream(audit, true, "UTF-8"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        boolean allowEveryone = false;
        String superUsers = "";
        List<StandardAcl> acls = new ArrayList<>();
        StandardAuthorizer authorizer = null;
        String line;
        while ((line = in.readLine()) != null) {
          try {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "CASE":
                    allowEveryone = Boolean.parseBoolean(f[1]);
                    superUsers = text(f[2]);
                    acls = new ArrayList<>();
                    authorizer = null;
                    break;
                case "ACL":
                    acls.add(new StandardAcl(ResourceType.valueOf(f[1]), text(f[2]), PatternType.valueOf(f[3]),
                        text(f[4]), text(f[5]), AclOperation.valueOf(f[6]), AclPermissionType.valueOf(f[7])));
                    authorizer = null;
                    break;
                case "ASK":
                case "BYTYPE": {
                    if (authorizer == null) authorizer = authorizer(allowEveryone, superUsers, acls);
                    KafkaPrincipal principal = new KafkaPrincipal(text(f[1]), text(f[2]));
                    audit.reset();
                    String result;
                    AuthorizableRequestContext context = context(principal, f[3]);
                    try {
                        if (f[0].equals("ASK")) {
                            Action action = new Action(AclOperation.valueOf(f[4]),
                                new ResourcePattern(ResourceType.valueOf(f[5]), text(f[6]), PatternType.LITERAL), 1, true, true);
                            result = authorizer.authorize(context, List.of(action)).get(0).name();
                        } else {
                            result = authorizer.authorizeByResourceType(context, AclOperation.valueOf(f[4]),
                                ResourceType.valueOf(f[5])).name();
                        }
                    } catch (RuntimeException e) {
                        // Kafka 4.x refuses a session principal User:* (Set.of sees it twice).
                        result = "ERROR:" + e.getClass().getSimpleName();
                    }
                    String logged = audit.toString(StandardCharsets.UTF_8);
                    int at = logged.indexOf("based on rule ");
                    String rule = at < 0 ? "" : logged.substring(at + 14, logged.indexOf('\n', at)).trim();
                    out.println(result + " " + b64(rule));
                    break;
                }
                case "MATCH": {
                    AclBindingFilter filter = new AclBindingFilter(
                        new ResourcePatternFilter(ResourceType.valueOf(f[1]), f[2].equals("-") ? null : text(f[2]),
                            PatternType.valueOf(f[3])),
                        new AccessControlEntryFilter(f[4].equals("-") ? null : text(f[4]),
                            f[5].equals("-") ? null : text(f[5]), AclOperation.valueOf(f[6]), AclPermissionType.valueOf(f[7])));
                    StringBuilder bits = new StringBuilder();
                    for (StandardAcl acl : acls) bits.append(filter.matches(acl.toBinding()) ? '1' : '0');
                    out.println(bits.length() == 0 ? "-" : bits.toString());
                    break;
                }
                case "ORDER": {
                    if (authorizer == null) authorizer = authorizer(allowEveryone, superUsers, acls);
                    StringBuilder order = new StringBuilder();
                    for (AclBinding binding : authorizer.acls(AclBindingFilter.ANY)) {
                        for (int i = 0; i < acls.size(); i++) {
                            if (acls.get(i).toBinding().equals(binding)) order.append(i).append(',');
                        }
                    }
                    out.println(order.length() == 0 ? "-" : order.toString());
                    break;
                }
                case "TEXT": {
                    StringBuilder texts = new StringBuilder();
                    for (StandardAcl acl : acls) {
                        AclBinding binding = acl.toBinding();
                        texts.append(b64(binding.toString())).append(' ')
                            .append(b64(binding.toFilter().toString())).append(' ');
                    }
                    texts.append(b64(AclBindingFilter.ANY.toString()));
                    out.println(texts.toString());
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown command " + f[0]);
            }
          } catch (Exception e) {
            errors.println("failed on: " + line);
            e.printStackTrace(errors);
            System.exit(1);
          }
        }
    }
}
