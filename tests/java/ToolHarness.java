// Runs Kafka's command-line tools (ConfigCommand, DelegationTokenCommand, ...) many times in
// one JVM, as Kafka's own tool tests do: each request names a main class and its arguments;
// the answer is the exit status and what the run printed on stdout and stderr. A JVM start
// with a broker's hundred jars costs seconds; a run here costs the tool's own work.
//
// The exit status: Kafka's tools end through Kafka's Exit class, whose exit procedure can be
// replaced (Exit.setExitProcedure); ours throws, which ends the run with that status. A main
// that returns normally exits 0, as its JVM would. Exit is
// org.apache.kafka.common.utils.Exit up to 3.9 and ...utils.internals.Exit in 4.x, so it is
// found by name, and this file needs nothing but the JDK to compile.
//
// Protocol (LineProtocol): "run <main class> <arg, base64>..." answers
// "ok <status> <stdout, base64> <stderr, base64>".
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public final class ToolHarness extends LineProtocol {
    /** Thrown by the exit procedure: unwinds the tool's main with its status. */
    static final class ExitCalled extends Error {
        final int status;

        ExitCalled(int status) {
            super("exit " + status, null, false, false);
            this.status = status;
        }
    }

    private ToolHarness() {
    }

    static void replaceExitProcedure() throws ReflectiveOperationException {
        Class<?> exit;
        try {
            exit = Class.forName("org.apache.kafka.common.utils.internals.Exit");
        } catch (ClassNotFoundException e) {
            exit = Class.forName("org.apache.kafka.common.utils.Exit");
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object thrower = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure},
            (proxy, method, args) -> {
                switch (method.getName()) {
                    case "execute": throw new ExitCalled((Integer) args[0]);
                    case "hashCode": return System.identityHashCode(proxy);
                    case "equals": return proxy == args[0];
                    default: return "ToolHarness exit procedure";
                }
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
    }

    /**
     * System.out and System.err, and Scala's Console, which Kafka 3.9's Scala tools print
     * through (Predef.println) and which keeps the streams it first saw.
     */
    static void redirect(PrintStream out, PrintStream err) throws ReflectiveOperationException {
        System.setOut(out);
        System.setErr(err);
        Object console;
        try {
            console = Class.forName("scala.Console$").getField("MODULE$").get(null);
        } catch (ClassNotFoundException e) {
            return;
        }
        console.getClass().getMethod("setOutDirect", PrintStream.class).invoke(console, out);
        console.getClass().getMethod("setErrDirect", PrintStream.class).invoke(console, err);
    }

    static String run(String[] fields) throws Exception {
        if (fields.length < 2 || !fields[0].equals("run")) {
            throw new IllegalArgumentException("expected: run <main class> <arg, base64>...");
        }
        String[] args = Arrays.stream(fields, 2, fields.length).map(LineProtocol::decs)
            .toArray(String[]::new);
        Method main = Class.forName(fields[1]).getMethod("main", String[].class);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        int status = 0;
        redirect(new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            main.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof ExitCalled)) {
                throw e;
            }
            status = ((ExitCalled) e.getCause()).status;
        } finally {
            System.out.flush();
            System.err.flush();
            redirect(stdout, stderr);
        }
        return "ok " + status + " " + enc(out.toByteArray()) + " " + enc(err.toByteArray());
    }

    public static void main(String[] argv) throws Exception {
        replaceExitProcedure();
        serve(ToolHarness::run, t -> t.toString());
    }
}
