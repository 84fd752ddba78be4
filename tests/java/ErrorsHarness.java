// Kafka's own table of error codes (org.apache.kafka.common.protocol.Errors) as an oracle for
// ours (sasl_scram/kafka/_errors.py, _error_texts.py). Line protocol (LineProtocol.java):
//   errors -> ok <tsv>
// <tsv> (base64) holds one line per code: code, name, the simple name of its exception class and
// its default message, tab-separated; NONE has no exception, so both are empty.
import org.apache.kafka.common.protocol.Errors;

public class ErrorsHarness extends LineProtocol {
    static String handle(String[] a) {
        if (!a[0].equals("errors")) return "err " + enc("unknown command " + a[0]);
        StringBuilder out = new StringBuilder();
        for (Errors e : Errors.values()) {
            Exception exception = e.exception();
            out.append(e.code()).append('\t').append(e.name()).append('\t')
                .append(exception == null ? "" : exception.getClass().getSimpleName()).append('\t')
                .append(exception == null ? "" : e.message()).append('\n');
        }
        return "ok " + enc(out.toString());
    }

    public static void main(String[] args) throws Exception {
        serve(ErrorsHarness::handle, LineProtocol::chain);
    }
}
