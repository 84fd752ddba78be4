// Drives Kafka's own SCRAM classes (kafka-clients 4.3.0) for the interop tests.
// Line protocol on stdin/stdout; every free-text or binary field is base64, "-" is empty/null.
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.ScramExtensionsCallback;
import org.apache.kafka.common.security.scram.internals.ScramCredentialUtils;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramMessages;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.scram.internals.ScramServerCallbackHandler;
import org.apache.kafka.common.security.token.delegation.TokenInformation;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache;
import org.apache.kafka.common.utils.Sanitizer;

public class ScramHarness extends LineProtocol {
    static final Map<String, ScramSaslClient> clients = new HashMap<>();
    static final Map<String, ScramSaslServer> servers = new HashMap<>();

    static Map<String, String> extensions(String f) {
        Map<String, String> m = new LinkedHashMap<>();
        String s = decs(f);
        if (!s.isEmpty()) {
            for (String kv : s.split(",")) {
                String[] p = kv.split("=", 2);
                m.put(p[0], p[1]);
            }
        }
        return m;
    }

    static String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "client": {
                // client <id> <mech> <user> <password> <extensions "k=v,k=v">
                ScramMechanism mech = ScramMechanism.forMechanismName(a[2]);
                String user = decs(a[3]);
                char[] password = decs(a[4]).toCharArray();
                Map<String, String> ext = extensions(a[5]);
                ScramSaslClient client = new ScramSaslClient(mech, callbacks -> {
                    for (Callback cb : callbacks) {
                        if (cb instanceof NameCallback) ((NameCallback) cb).setName(user);
                        else if (cb instanceof PasswordCallback) ((PasswordCallback) cb).setPassword(password);
                        else if (cb instanceof ScramExtensionsCallback) ((ScramExtensionsCallback) cb).extensions(ext);
                    }
                });
                clients.put(a[1], client);
                return "ok";
            }
            case "cstep": {
                ScramSaslClient c = clients.get(a[1]);
                byte[] out = c.evaluateChallenge(dec(a[2]));
                return "ok " + enc(out) + " " + (c.isComplete() ? 1 : 0);
            }
            case "server": {
                // server <id> <mech> <kind user|token> <name> <credential string> <owner> <expiry>
                ScramMechanism mech = ScramMechanism.forMechanismName(a[2]);
                CredentialCache credentials = new CredentialCache();
                ScramCredentialUtils.createCache(credentials, ScramMechanism.mechanismNames());
                DelegationTokenCache tokens = new DelegationTokenCache(ScramMechanism.mechanismNames());
                String name = decs(a[4]);
                if (!a[5].equals("-")) {
                    ScramCredential cred = ScramCredentialUtils.credentialFromString(decs(a[5]));
                    if (a[3].equals("user")) {
                        credentials.cache(mech.mechanismName(), ScramCredential.class).put(name, cred);
                    } else {
                        KafkaPrincipal owner = new KafkaPrincipal("User", decs(a[6]));
                        long expiry = Long.parseLong(a[7]);
                        tokens.addToken(name, new TokenInformation(name, owner, owner,
                            new ArrayList<>(), 0L, Long.MAX_VALUE, expiry));
                        tokens.credentialCache(mech.mechanismName()).put(name, cred);
                    }
                }
                ScramServerCallbackHandler handler = new ScramServerCallbackHandler(
                    credentials.cache(mech.mechanismName(), ScramCredential.class), tokens);
                handler.configure(Collections.emptyMap(), mech.mechanismName(), Collections.emptyList());
                servers.put(a[1], new ScramSaslServer(mech, Collections.emptyMap(), handler));
                return "ok";
            }
            case "sstep": {
                ScramSaslServer s = servers.get(a[1]);
                byte[] out = s.evaluateResponse(dec(a[2]));
                if (!s.isComplete()) return "ok " + enc(out) + " 0";
                Object tokenauth = s.getNegotiatedProperty("tokenauth");
                Object lifetime = s.getNegotiatedProperty("CREDENTIAL.LIFETIME.MS");
                return "ok " + enc(out) + " 1 " + enc(s.getAuthorizationID()) + " "
                    + enc(tokenauth == null ? null : tokenauth.toString()) + " "
                    + (lifetime == null ? "null" : lifetime.toString());
            }
            case "credparse": {
                ScramCredential c = ScramCredentialUtils.credentialFromString(decs(a[1]));
                return "ok " + enc(ScramCredentialUtils.credentialToString(c));
            }
            case "credmake": {
                ScramFormatter f = new ScramFormatter(ScramMechanism.forMechanismName(a[1]));
                ScramCredential c = f.generateCredential(decs(a[2]), Integer.parseInt(a[3]));
                return "ok " + enc(ScramCredentialUtils.credentialToString(c));
            }
            case "credverify": {
                // credverify <mech> <credential string> <password>: does the password match?
                ScramMechanism mech = ScramMechanism.forMechanismName(a[1]);
                ScramFormatter f = new ScramFormatter(mech);
                ScramCredential c = ScramCredentialUtils.credentialFromString(decs(a[2]));
                byte[] salted = f.saltedPassword(decs(a[3]), c.salt(), c.iterations());
                byte[] stored = f.storedKey(f.clientKey(salted));
                byte[] server = f.serverKey(salted);
                boolean ok = java.util.Arrays.equals(stored, c.storedKey())
                    && java.util.Arrays.equals(server, c.serverKey());
                return "ok " + (ok ? 1 : 0);
            }
            case "cfirst": {
                ScramMessages.ClientFirstMessage m = new ScramMessages.ClientFirstMessage(dec(a[1]));
                return "ok " + enc(m.saslName()) + " " + enc(m.nonce()) + " " + enc(m.authorizationId())
                    + " " + enc(m.clientFirstMessageBare()) + " " + (m.extensions().tokenAuthenticated() ? 1 : 0);
            }
            case "sfirst": {
                ScramMessages.ServerFirstMessage m = new ScramMessages.ServerFirstMessage(dec(a[1]));
                return "ok " + enc(m.nonce()) + " " + enc(m.salt()) + " " + m.iterations();
            }
            case "cfinal": {
                ScramMessages.ClientFinalMessage m = new ScramMessages.ClientFinalMessage(dec(a[1]));
                return "ok " + enc(m.nonce()) + " " + enc(m.channelBinding()) + " " + enc(m.proof())
                    + " " + enc(m.clientFinalMessageWithoutProof());
            }
            case "sfinal": {
                ScramMessages.ServerFinalMessage m = new ScramMessages.ServerFinalMessage(dec(a[1]));
                return "ok " + enc(m.error()) + " " + enc(m.serverSignature());
            }
            case "jdk": {
                // The feature release of the JVM running this harness (17, 25, ...).
                return "ok " + Runtime.version().feature();
            }
            case "hashmap": {
                // Kafka 3.x: Utils.parseMap fills a HashMap, SaslExtensions copies it with
                // new HashMap<>(map). Kafka 4.x uses Map.copyOf instead (order random per JVM).
                Map<String, String> parsed = new HashMap<>();
                for (String k : decs(a[1]).split(",")) parsed.put(k, "v");
                StringBuilder sb = new StringBuilder();
                for (String k : new HashMap<>(parsed).keySet()) sb.append(sb.length() == 0 ? "" : ",").append(k);
                return "ok " + enc(sb.toString());
            }
            case "saslname": {
                return "ok " + enc(ScramFormatter.saslName(decs(a[1])));
            }
            case "username": {
                return "ok " + enc(ScramFormatter.username(decs(a[1])));
            }
            case "sanitize": {
                return "ok " + enc(Sanitizer.sanitize(decs(a[1])));
            }
            case "desanitize": {
                return "ok " + enc(Sanitizer.desanitize(decs(a[1])));
            }
            default:
                return "err " + enc("unknown command " + a[0]);
        }
    }

    public static void main(String[] args) throws Exception {
        // The whole cause chain: the tests match Kafka's wrapped messages.
        serve(ScramHarness::handle, LineProtocol::chain);
    }
}
