// The line protocol of the harnesses here (tests/support/javaharness.py): one request line in, one
// response line out, fields separated by single spaces; a free-text or binary field is base64,
// "-" is empty and "null" a Java null. A harness extends this class for its codec and its loop.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.function.Function;

class LineProtocol {
    /** One request's fields in, the response line out ("ok ..." or "err ..."). */
    interface Handler {
        String handle(String[] fields) throws Exception;
    }

    protected LineProtocol() {
    }

    static String enc(byte[] b) {
        if (b == null) return "null";
        if (b.length == 0) return "-";
        return Base64.getEncoder().encodeToString(b);
    }

    static String enc(String s) {
        return s == null ? "null" : enc(s.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] dec(String f) {
        return f.equals("-") ? new byte[0] : Base64.getDecoder().decode(f);
    }

    static String decs(String f) {
        return new String(dec(f), StandardCharsets.UTF_8);
    }

    /** The throwable and its whole cause chain ("Class: message | caused by ..."). */
    static String chain(Throwable t) {
        String text = t.getClass().getSimpleName() + ": " + t.getMessage();
        for (Throwable c = t.getCause(); c != null; c = c.getCause())
            text += " | caused by " + c.getClass().getSimpleName() + ": " + c.getMessage();
        return text;
    }

    /**
     * Answer every line on stdin until it closes. Whatever the handler throws is answered
     * "err <describe(throwable), base64>", so one bad request never ends the session.
     */
    static void serve(Handler handler, Function<Throwable, String> describe) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        String line;
        while ((line = in.readLine()) != null) {
            String reply;
            try {
                reply = handler.handle(line.split(" "));
            } catch (Throwable t) {
                reply = "err " + enc(describe.apply(t));
            }
            System.out.println(reply);
            System.out.flush();
        }
    }
}
