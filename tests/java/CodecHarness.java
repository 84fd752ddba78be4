// Kafka's generated message classes (org.apache.kafka.common.message.*Data) as an oracle for
// our wire codec (sasl_scram/kafka). Line protocol (LineProtocol.java):
//   range <apiKey>                        -> ok <lowest> <highest>
//   stable <apiKey>                       -> ok <lowest> <highest stable>
//   empty <apiKey> <version> req|resp     -> ok <body>
//   req|resp <apiKey> <version> <payload> <json>
//                                         -> ok <reread> <fromJson>
// <payload> is a frame's payload as ours wrote it (header then body). <reread> is what Kafka's
// classes write after reading that payload (the header and body versions Kafka picks for the API
// version); the read must consume every byte. <json> is {"header": {...}, "body": {...}} in the
// form of Kafka's generated *JsonConverter classes; <fromJson> is what Kafka writes for it, so
// the message is encoded by Kafka's code alone. Both outputs are whole payloads, base64.
// <highest stable> leaves out a version the JSON marks unstable (latestVersionUnstable). <body>
// is what Kafka writes for a new message object, every field at its default, without a header.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.RequestHeaderDataJsonConverter;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.message.ResponseHeaderDataJsonConverter;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

public class CodecHarness extends LineProtocol {
    static final ObjectMapper JSON = new ObjectMapper();

    /** The header and the body, written one after the other as a frame's payload. */
    static byte[] write(Message header, short headerVersion, Message body, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int headerSize = header.size(cache, headerVersion);
        int size = headerSize + body.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        ByteBufferAccessor out = new ByteBufferAccessor(buf);
        header.write(out, cache, headerVersion);
        body.write(out, cache, version);
        if (buf.hasRemaining()) throw new IllegalStateException("size() and write() disagree");
        return buf.array();
    }

    /** Kafka's generated {@code <Name>JsonConverter.read(JsonNode, short)} for a message class. */
    static Message fromJson(Message empty, JsonNode node, short version) throws Exception {
        Class<?> converter = Class.forName(empty.getClass().getName() + "JsonConverter");
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        return (Message) read.invoke(null, node, version);
    }

    static String handle(String[] a) throws Exception {
        ApiMessageType type = ApiMessageType.fromApiKey(Short.parseShort(a[1]));
        if (a[0].equals("range")) {
            return "ok " + type.lowestSupportedVersion() + " " + type.highestSupportedVersion(true);
        }
        if (a[0].equals("stable")) {
            return "ok " + type.lowestSupportedVersion() + " " + type.highestSupportedVersion(false);
        }
        if (a[0].equals("empty")) {
            ApiMessage empty = a[3].equals("req") ? type.newRequest() : type.newResponse();
            short version = Short.parseShort(a[2]);
            ObjectSerializationCache cache = new ObjectSerializationCache();
            ByteBuffer buf = ByteBuffer.allocate(empty.size(cache, version));
            empty.write(new ByteBufferAccessor(buf), cache, version);
            return "ok " + enc(buf.array());
        }
        boolean request = a[0].equals("req");
        if (!request && !a[0].equals("resp")) return "err " + enc("unknown command " + a[0]);
        short version = Short.parseShort(a[2]);
        short headerVersion = request ? type.requestHeaderVersion(version) : type.responseHeaderVersion(version);
        ByteBuffer buf = ByteBuffer.wrap(dec(a[3]));
        ByteBufferAccessor in = new ByteBufferAccessor(buf);
        Message header = request ? new RequestHeaderData() : new ResponseHeaderData();
        header.read(in, headerVersion);
        ApiMessage body = request ? type.newRequest() : type.newResponse();
        body.read(in, version);
        if (buf.hasRemaining()) {
            return "err " + enc(buf.remaining() + " bytes left after reading the body");
        }
        byte[] reread = write(header, headerVersion, body, version);

        JsonNode json = JSON.readTree(dec(a[4]));
        Message jsonHeader = request
            ? RequestHeaderDataJsonConverter.read(json.get("header"), headerVersion)
            : ResponseHeaderDataJsonConverter.read(json.get("header"), headerVersion);
        Message jsonBody = fromJson(body, json.get("body"), version);
        return "ok " + enc(reread) + " " + enc(write(jsonHeader, headerVersion, jsonBody, version));
    }

    public static void main(String[] args) throws Exception {
        // The cause chain: InvocationTargetException wraps the JSON converter's own error.
        serve(CodecHarness::handle, LineProtocol::chain);
    }
}
