// Drives an A2A server with the official JS SDK client (@a2a-js/sdk, v1.0 API).
//
//   node tests/interop/js/client.mjs BASE_URL BINDING      (BINDING: jsonrpc | rest | grpc)
//
// The client is built the SDK's way: ClientFactory.createFromUrl(BASE_URL)
// fetches /.well-known/agent-card.json and picks the card's interface for
// the one transport factory it is given. Against the interop agent
// (tests/interop/agents.py: echo, "slow N", "ask", "reply", "boom") it runs the steps
// public_card (the resolver), card (Client.getAgentCard), transport, send
// (blocking), stream, get, list, cancel_submit / cancel / cancel_get and
// error (GetTask on an unknown id), then get_history0, multi_turn ("ask" →
// INPUT_REQUIRED, then a follow-up on the task) and subscribe (a working task,
// canceled while subscribed), stream_terminal and subscribe_terminal (errors
// on streams), parts (every kind of Part, echoed), list_filtered, reply and
// reply_stream (a direct Message), boom and boom_stream (the agent raises),
// and prints one JSON line per step:
//
//   {"step": "send", "ok": true, "value": ...}      values as ProtoJSON (the SDK's toJSON)
//   {"step": "error", "ok": false, "error": {"name": "TaskNotFoundError", ...}}
//
// A failing step never stops the later ones.

import { randomUUID } from "node:crypto";
import {
  AgentCard,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  Role,
  StreamResponse,
  Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";

const [baseUrl, binding] = process.argv.slice(2);
const FACTORIES = { jsonrpc: JsonRpcTransportFactory, rest: RestTransportFactory };
const PROTOCOL = { jsonrpc: "JSONRPC", rest: "HTTP+JSON", grpc: "GRPC" };
if (binding === "grpc") {
  // Node-only transport; needs the optional peers @grpc/grpc-js and @bufbuild/protobuf.
  FACTORIES.grpc = (await import("@a2a-js/sdk/client/grpc")).GrpcTransportFactory;
}
if (!baseUrl || !FACTORIES[binding]) {
  console.error("usage: client.mjs BASE_URL jsonrpc|rest|grpc");
  process.exit(2);
}

function emit(step, value, error) {
  const record = { step, ok: error === undefined };
  if (error === undefined) {
    record.value = value;
  } else {
    record.error = {
      name: error?.constructor?.name ?? typeof error,
      message: String(error?.message ?? error),
      isTaskNotFound: error instanceof TaskNotFoundError,
      isUnsupportedOperation: error instanceof UnsupportedOperationError,
    };
  }
  process.stdout.write(JSON.stringify(record) + "\n");
}

async function step(name, call) {
  try {
    const value = await call();
    emit(name, value);
    return value;
  } catch (error) {
    emit(name, undefined, error);
    return undefined;
  }
}

function options() {
  return { signal: AbortSignal.timeout(15000) };
}

function userMessage(text) {
  return {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const RETURN_IMMEDIATELY = {
  acceptedOutputModes: [],
  taskPushNotificationConfig: undefined,
  returnImmediately: true,
};

function sendRequest(text, configuration) {
  return { tenant: "", message: userMessage(text), configuration, metadata: undefined };
}

// A blocking send answers a Task or a Message; tell them apart as ProtoJSON.
function resultJson(result) {
  if (result && "status" in result) return { task: Task.toJSON(result) };
  return { message: Message.toJSON(result) };
}

const factory = new ClientFactory({
  transports: [new FACTORIES[binding]()],
  preferredTransports: [PROTOCOL[binding]],
});

let client;
try {
  client = await factory.createFromUrl(baseUrl);
} catch (error) {
  emit("card", undefined, error);
  process.exit(0);
}
await step("public_card", async () =>
  AgentCard.toJSON(await new DefaultAgentCardResolver().resolve(baseUrl)),
);
await step("card", async () => AgentCard.toJSON(await client.getAgentCard(options())));
emit("transport", { name: client.transport.constructor.name, protocol: client.transport.protocolName });

const sent = await step("send", async () =>
  resultJson(await client.sendMessage(sendRequest("hello js"), options())),
);
await step("stream", async () => {
  const events = [];
  for await (const event of client.sendMessageStream(sendRequest("hello js stream"), options())) {
    events.push(StreamResponse.toJSON(event));
  }
  return events;
});
const taskId = sent?.task?.id ?? "missing";
const contextId = sent?.task?.contextId ?? "missing";
await step("get", async () => Task.toJSON(await client.getTask({ tenant: "", id: taskId }, options())));
await step("list", async () =>
  // fromJSON fills every field: the gRPC transport cannot encode a missing enum.
  ListTasksResponse.toJSON(await client.listTasks(ListTasksRequest.fromJSON({ contextId }), options())),
);

const submitted = await step("cancel_submit", async () =>
  resultJson(
    await client.sendMessage(
      sendRequest("slow 30", RETURN_IMMEDIATELY),
      options(),
    ),
  ),
);
const slowId = submitted?.task?.id ?? "missing";
await step("cancel", async () => Task.toJSON(await client.cancelTask({ tenant: "", id: slowId }, options())));
await step("cancel_get", async () =>
  Task.toJSON(await client.getTask({ tenant: "", id: slowId }, options())),
);

await step("error", async () =>
  Task.toJSON(await client.getTask({ tenant: "", id: `no-such-task-${randomUUID()}` }, options())),
);

// Beyond the list: historyLength 0, multi-turn, subscribe then cancel.
await step("get_history0", async () =>
  Task.toJSON(await client.getTask({ tenant: "", id: taskId, historyLength: 0 }, options())),
);

await step("multi_turn", async () => {
  const asked = [];
  for await (const event of client.sendMessageStream(sendRequest("ask"), options())) {
    asked.push(StreamResponse.toJSON(event));
  }
  const first = asked[0]?.task ?? {};
  const reply = sendRequest("the answer");
  reply.message.taskId = first.id ?? "";
  reply.message.contextId = first.contextId ?? "";
  const answered = resultJson(await client.sendMessage(reply, options()));
  return { asked, answered };
});

await step("subscribe", async () => {
  const started = await client.sendMessage(sendRequest("slow 30", RETURN_IMMEDIATELY), options());
  const events = [];
  let gotFirst;
  const first = new Promise((resolve) => (gotFirst = resolve));
  const reader = (async () => {
    for await (const event of client.resubscribeTask({ tenant: "", id: started.id }, options())) {
      events.push(StreamResponse.toJSON(event));
      gotFirst();
    }
  })();
  await Promise.race([first, reader]);
  await client.cancelTask({ tenant: "", id: started.id }, options());
  await reader;
  return events;
});

// Errors on streams: a streaming message to a completed task, a subscription to it.
await step("stream_terminal", async () => {
  const request = sendRequest("again");
  request.message.taskId = taskId;
  request.message.contextId = contextId;
  const events = [];
  for await (const event of client.sendMessageStream(request, options())) {
    events.push(StreamResponse.toJSON(event));
  }
  return events;
});
await step("subscribe_terminal", async () => {
  const events = [];
  for await (const event of client.resubscribeTask({ tenant: "", id: taskId }, options())) {
    events.push(StreamResponse.toJSON(event));
  }
  return events;
});

// Every kind of Part, echoed back unchanged (the same parts as sdk_client.py).
await step("parts", async () => {
  const part = (content, extra = {}) => ({ content, metadata: undefined, filename: "", mediaType: "", ...extra });
  const request = sendRequest("");
  request.message.parts = [
    part({ $case: "text", value: "héllo ✓" }, { mediaType: "text/plain", metadata: { k: "v", n: 1.5 } }),
    part(
      { $case: "raw", value: Buffer.from([0xfb, 0xff, 0xfe, 0x00, 0x3e, 0x3f]) },
      { mediaType: "application/octet-stream", filename: "b.bin" },
    ),
    part(
      { $case: "data", value: { list: [1, 2.5, "x", null, true], nested: { a: "b" } } },
      { mediaType: "application/json" },
    ),
    part({ $case: "url", value: "https://example.com/f.txt" }, { mediaType: "text/plain", filename: "f.txt" }),
  ];
  request.message.metadata = { origin: "a2a-js" };
  return resultJson(await client.sendMessage(request, options()));
});

// ListTasks with every filter: on REST they travel as query parameters
// (enum by name, booleans, numbers, an ISO 8601 timestamp — spec §11.5).
await step("list_filtered", async () =>
  ListTasksResponse.toJSON(
    await client.listTasks(
      {
        tenant: "",
        contextId,
        status: TaskState.TASK_STATE_COMPLETED,
        pageSize: 5,
        pageToken: "",
        historyLength: 0,
        statusTimestampAfter: new Date(Date.now() - 3600 * 1000).toISOString(),
        includeArtifacts: true,
      },
      options(),
    ),
  ),
);

// A direct Message answer (no task), blocking and streaming.
await step("reply", async () => resultJson(await client.sendMessage(sendRequest("reply"), options())));
await step("reply_stream", async () => {
  const events = [];
  for await (const event of client.sendMessageStream(sendRequest("reply"), options())) {
    events.push(StreamResponse.toJSON(event));
  }
  return events;
});

// The agent raises after WORKING: a FAILED task, blocking and streaming.
await step("boom", async () => resultJson(await client.sendMessage(sendRequest("boom"), options())));
await step("boom_stream", async () => {
  const events = [];
  for await (const event of client.sendMessageStream(sendRequest("boom"), options())) {
    events.push(StreamResponse.toJSON(event));
  }
  return events;
});
