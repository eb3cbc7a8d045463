// Sends a diff to an A2A agent over gRPC (SendMessage) with grpc-java and prints
// the findings of the task's artifact, one per line:
//
//   app/users.py:18 S608 [high] Possible SQL injection vector ...
//
// usage: java Review HOST:PORT FILE.diff
// com.google.lf.a2a.v1 is generated from proto/ by protoc's java_out and
// grpc-java's protoc plugin; see the README, "Generate a client in your language".

import com.google.lf.a2a.v1.A2AServiceGrpc;
import com.google.lf.a2a.v1.Artifact;
import com.google.lf.a2a.v1.Message;
import com.google.lf.a2a.v1.Part;
import com.google.lf.a2a.v1.Role;
import com.google.lf.a2a.v1.SendMessageRequest;
import com.google.lf.a2a.v1.Task;
import com.google.protobuf.ByteString;
import com.google.protobuf.Value;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

public final class Review {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: java Review HOST:PORT FILE.diff");
      System.exit(2);
    }
    Path file = Path.of(args[1]);
    SendMessageRequest request =
        SendMessageRequest.newBuilder()
            .setMessage(
                Message.newBuilder()
                    .setMessageId(UUID.randomUUID().toString())
                    .setRole(Role.ROLE_USER)
                    .addParts(
                        Part.newBuilder()
                            .setRaw(ByteString.copyFrom(Files.readAllBytes(file)))
                            .setFilename(file.getFileName().toString())
                            .setMediaType("text/x-diff")))
            .build();
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("a2a-version", Metadata.ASCII_STRING_MARSHALLER), "1.0");

    ManagedChannel channel = ManagedChannelBuilder.forTarget(args[0]).usePlaintext().build();
    try {
      Task task =
          A2AServiceGrpc.newBlockingStub(channel)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
              .withDeadlineAfter(60, TimeUnit.SECONDS)
              .sendMessage(request)
              .getTask();
      System.out.println(task.getStatus().getState());
      for (Artifact artifact : task.getArtifactsList()) {
        for (Part part : artifact.getPartsList()) {
          if (part.getContentCase() != Part.ContentCase.DATA) {
            continue;
          }
          Value findings = part.getData().getStructValue().getFieldsOrDefault("findings", Value.getDefaultInstance());
          for (Value finding : findings.getListValue().getValuesList()) {
            Map<String, Value> f = finding.getStructValue().getFieldsMap();
            System.out.printf(
                "%s:%d %s [%s] %s%n",
                f.get("file").getStringValue(),
                (long) f.get("line").getNumberValue(),
                f.get("rule").getStringValue(),
                f.get("severity").getStringValue(),
                f.get("issue").getStringValue());
          }
        }
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
