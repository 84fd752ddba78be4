// Kafka's own Java clients (kafka-clients 4.3.0) against our endpoint, configured only
// through ordinary client properties. Line protocol; free-text fields are base64, "-" is empty.
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class EndpointClientHarness extends LineProtocol {
    static final Map<String, Admin> admins = new HashMap<>();

    static Properties props(String f) throws Exception {
        Properties p = new Properties();
        p.load(new StringReader(decs(f)));
        return p;
    }

    static Throwable root(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof RuntimeException) && t.getCause() != null
               && !(t instanceof org.apache.kafka.common.KafkaException)) t = t.getCause();
        return t;
    }

    static String principals(Collection<KafkaPrincipal> ps) {
        List<String> out = new ArrayList<>();
        for (KafkaPrincipal p : ps) out.add(p.toString());
        return String.join(",", out);
    }

    static String token(DelegationToken t) {
        TokenInformation i = t.tokenInfo();
        return enc(i.tokenId()) + " " + Base64.getEncoder().encodeToString(t.hmac()) + " " + enc(i.owner().toString())
            + " " + enc(i.tokenRequester().toString()) + " " + enc(principals(i.renewers())) + " "
            + i.issueTimestamp() + " " + i.expiryTimestamp() + " " + i.maxTimestamp();
    }

    static String handle(String[] a) throws Exception {
        switch (a[0]) {
            case "admin": {
                admins.put(a[1], Admin.create(props(a[2])));
                return "ok";
            }
            case "close": {
                Admin admin = admins.remove(a[1]);
                if (admin != null) admin.close();
                return "ok";
            }
            case "describeCluster": {
                DescribeClusterResult r = admins.get(a[1]).describeCluster();
                return "ok " + r.nodes().get(30, TimeUnit.SECONDS).size() + " "
                    + r.controller().get(30, TimeUnit.SECONDS).id() + " " + enc(r.clusterId().get(30, TimeUnit.SECONDS));
            }
            case "describeScram": {
                Admin admin = admins.get(a[1]);
                Map<String, UserScramCredentialsDescription> all = a.length > 2
                    ? admin.describeUserScramCredentials(List.of(decs(a[2]).split(","))).all().get(30, TimeUnit.SECONDS)
                    : admin.describeUserScramCredentials().all().get(30, TimeUnit.SECONDS);
                StringBuilder sb = new StringBuilder("ok");
                for (Map.Entry<String, UserScramCredentialsDescription> e : new java.util.TreeMap<>(all).entrySet()) {
                    StringBuilder infos = new StringBuilder();
                    for (ScramCredentialInfo i : e.getValue().credentialInfos())
                        infos.append(infos.length() == 0 ? "" : ",").append(i.mechanism()).append(":").append(i.iterations());
                    sb.append(" ").append(enc(e.getKey() + "=" + infos));
                }
                return sb.toString();
            }
            case "alterScram": {
                // alterScram <id> (up <user> <mech> <iterations> <password> | del <user> <mech>)...
                List<UserScramCredentialAlteration> alts = new ArrayList<>();
                int i = 2;
                while (i < a.length) {
                    org.apache.kafka.clients.admin.ScramMechanism mech;
                    if (a[i].equals("up")) {
                        mech = org.apache.kafka.clients.admin.ScramMechanism.fromMechanismName(a[i + 2]);
                        alts.add(new UserScramCredentialUpsertion(decs(a[i + 1]),
                            new ScramCredentialInfo(mech, Integer.parseInt(a[i + 3])), decs(a[i + 4])));
                        i += 5;
                    } else {
                        mech = org.apache.kafka.clients.admin.ScramMechanism.fromMechanismName(a[i + 2]);
                        alts.add(new UserScramCredentialDeletion(decs(a[i + 1]), mech));
                        i += 3;
                    }
                }
                Map<String, org.apache.kafka.common.KafkaFuture<Void>> results =
                    admins.get(a[1]).alterUserScramCredentials(alts).values();
                StringBuilder sb = new StringBuilder("ok");
                for (Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> e : new java.util.TreeMap<>(results).entrySet()) {
                    String outcome;
                    try {
                        e.getValue().get(30, TimeUnit.SECONDS);
                        outcome = "NONE";
                    } catch (ExecutionException ex) {
                        outcome = ex.getCause().getClass().getSimpleName() + ": " + ex.getCause().getMessage();
                    }
                    sb.append(" ").append(enc(e.getKey() + "=" + outcome));
                }
                return sb.toString();
            }
            case "consumerTopics": {
                Properties p = props(a[1]);
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    return "ok " + c.listTopics(java.time.Duration.ofSeconds(30)).size();
                }
            }
            case "createToken": {
                // createToken <id> <maxLifeMs> <renewers comma or -> [<owner>]
                CreateDelegationTokenOptions o = new CreateDelegationTokenOptions().maxlifeTimeMs(Long.parseLong(a[2]));
                List<KafkaPrincipal> renewers = new ArrayList<>();
                for (String r : decs(a[3]).split(",")) if (!r.isEmpty()) renewers.add(org.apache.kafka.common.utils.SecurityUtils.parseKafkaPrincipal(r));
                o.renewers(renewers);
                if (a.length > 4) o.owner(org.apache.kafka.common.utils.SecurityUtils.parseKafkaPrincipal(decs(a[4])));
                return "ok " + token(admins.get(a[1]).createDelegationToken(o).delegationToken().get(30, TimeUnit.SECONDS));
            }
            case "renewToken": {
                long t = admins.get(a[1]).renewDelegationToken(Base64.getDecoder().decode(a[2]),
                    new RenewDelegationTokenOptions().renewTimePeriodMs(Long.parseLong(a[3]))).expiryTimestamp().get(30, TimeUnit.SECONDS);
                return "ok " + t;
            }
            case "expireToken": {
                long t = admins.get(a[1]).expireDelegationToken(Base64.getDecoder().decode(a[2]),
                    new ExpireDelegationTokenOptions().expiryTimePeriodMs(Long.parseLong(a[3]))).expiryTimestamp().get(30, TimeUnit.SECONDS);
                return "ok " + t;
            }
            case "describeTokens": {
                DescribeDelegationTokenOptions o = new DescribeDelegationTokenOptions();
                if (a.length > 2) {
                    List<KafkaPrincipal> owners = new ArrayList<>();
                    for (String r : decs(a[2]).split(",")) if (!r.isEmpty()) owners.add(org.apache.kafka.common.utils.SecurityUtils.parseKafkaPrincipal(r));
                    o.owners(owners);
                }
                List<DelegationToken> tokens = admins.get(a[1]).describeDelegationToken(o).delegationTokens().get(30, TimeUnit.SECONDS);
                StringBuilder sb = new StringBuilder("ok " + tokens.size());
                for (DelegationToken t : tokens) sb.append(" ").append(enc(token(t)));
                return sb.toString();
            }
            default:
                return "err " + enc("unknown command " + a[0]);
        }
    }

    /** The root cause only: the tests compare the exception the Admin API reports. */
    static String describe(Throwable t) {
        Throwable r = root(t);
        return r.getClass().getSimpleName() + ": " + r.getMessage();
    }

    public static void main(String[] args) throws Exception {
        serve(EndpointClientHarness::handle, EndpointClientHarness::describe);
        for (Admin admin : admins.values()) admin.close();
    }
}
