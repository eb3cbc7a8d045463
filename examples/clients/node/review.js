// Sends a diff to an A2A agent over gRPC (SendMessage) with @grpc/grpc-js and
// prints the findings of the task's artifact, one per line:
//
//   app/users.py:18 S608 [high] Possible SQL injection vector ...
//
// usage: node review.js HOST:PORT FILE.diff
// ./gen/ is generated from proto/ by protoc-gen-es (@bufbuild/protobuf); see
// the README, "Generate a client in your language".
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

import { create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";

import { A2AService, Role, SendMessageRequestSchema, TaskState } from "./gen/lf/a2a/v1/a2a_pb.js";

// A grpc-js client for a protobuf-es service: one method per RPC, messages
// (de)serialized by the generated schemas.
function grpcClient(service, address) {
  const definition = Object.fromEntries(
    service.methods.map((m) => [
      m.localName,
      {
        path: `/${service.typeName}/${m.name}`,
        requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
        responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
        requestSerialize: (msg) => Buffer.from(toBinary(m.input, msg)),
        responseDeserialize: (bytes) => fromBinary(m.output, bytes),
      },
    ]),
  );
  const Client = grpc.makeGenericClientConstructor(definition, service.name);
  return new Client(address, grpc.credentials.createInsecure());
}

const [address, file] = process.argv.slice(2);
if (!file) {
  console.error("usage: node review.js HOST:PORT FILE.diff");
  process.exit(2);
}
const request = create(SendMessageRequestSchema, {
  message: {
    messageId: randomUUID(),
    role: Role.USER,
    parts: [{ content: { case: "raw", value: readFileSync(file) }, filename: basename(file), mediaType: "text/x-diff" }],
  },
});
const metadata = new grpc.Metadata();
metadata.set("a2a-version", "1.0");

const client = grpcClient(A2AService, address);
client.sendMessage(request, metadata, { deadline: Date.now() + 60_000 }, (err, response) => {
  client.close();
  if (err) {
    console.error(`error: ${err.message}`);
    process.exit(1);
  }
  const task = response.payload.value;
  console.log(`TASK_STATE_${TaskState[task.status.state]}`);
  for (const artifact of task.artifacts) {
    for (const part of artifact.parts) {
      if (part.content.case !== "data") continue;
      for (const f of toJson(ValueSchema, part.content.value).findings ?? []) {
        console.log(`${f.file}:${f.line} ${f.rule} [${f.severity}] ${f.issue}`);
      }
    }
  }
});
