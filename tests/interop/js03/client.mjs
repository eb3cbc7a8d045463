// Drives an A2A server with the official JS SDK **0.3.x** client (@a2a-js/sdk 0.3, the v0.3 wire).
//
//   node tests/interop/js03/client.mjs BASE_URL BINDING WEBHOOK_URL     (BINDING: jsonrpc | rest)
//
// Runs from tests/interop/js03/node_modules (its own package.json, apart from
// the 1.x SDK in the repository root). The client is built the SDK's way:
// ClientFactory.createFromUrl(BASE_URL) reads /.well-known/agent-card.json (the
// v0.3 fields url / preferredTransport / additionalInterfaces) and picks the
// interface of the one transport factory it is given. Against the interop
// agent (tests/interop/agents.py: echo, "slow N", "ask") it runs the steps card,
// transport, send (blocking), stream, get (historyLength 1), cancel (a slow
// task), resubscribe (a slow task canceled while subscribed), resubscribe_done
// (a finished task), push_set / push_get / push_list / push_delete, parts,
// multi_turn and error (tasks/get of an unknown id), and prints one JSON line
// per step, values as the SDK returned them (v0.3 JSON objects):
//
//   {"step": "send", "ok": true, "value": {...}}
//   {"step": "error", "ok": false, "error": {"name": "TaskNotFoundJSONRPCError", ...}}
//
// A failing step never stops the later ones.

import { randomUUID } from "node:crypto";
import {
  ClientFactory,
  JsonRpcTransport,
  JsonRpcTransportFactory,
  RestTransport,
  RestTransportFactory,
  TaskNotFoundError,
} from "@a2a-js/sdk/client";

const [baseUrl, binding, webhook] = process.argv.slice(2);
const FACTORIES = { jsonrpc: JsonRpcTransportFactory, rest: RestTransportFactory };
if (!baseUrl || !FACTORIES[binding] || !webhook) {
  console.error("usage: client.mjs BASE_URL jsonrpc|rest WEBHOOK_URL");
  process.exit(2);
}

function emit(step, value, error) {
  const record = { step, ok: error === undefined };
  if (error === undefined) {
    record.value = value === undefined ? null : value;
  } else {
    record.error = {
      name: error?.constructor?.name ?? typeof error,
      message: String(error?.message ?? error),
      isTaskNotFound: error instanceof TaskNotFoundError,
      response: error?.errorResponse ?? null,
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

const options = () => ({ signal: AbortSignal.timeout(15000) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function message(text, taskId) {
  const msg = { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text }] };
  if (taskId) msg.taskId = taskId;
  return msg;
}

const send = (msg, configuration) => client.sendMessage({ message: msg, configuration }, options());
const startSlow = () => send(message("slow 30"), { blocking: false });

async function collect(events) {
  const out = [];
  for await (const event of events) out.push(event);
  return out;
}

const factory = new ClientFactory({ transports: [new FACTORIES[binding]()] });
let client;
try {
  client = await factory.createFromUrl(baseUrl);
} catch (error) {
  emit("card", undefined, error);
  process.exit(0);
}
await step("card", () => client.getAgentCard(options()));
emit("transport", {
  jsonrpc: client.transport instanceof JsonRpcTransport,
  rest: client.transport instanceof RestTransport,
});

await step("send", () => send(message("hello js 0.3")));
await step("stream", () =>
  collect(client.sendMessageStream({ message: message("stream js 0.3") }, options())),
);
await step("get", async () => {
  const task = await send(message("to get"));
  return client.getTask({ id: task.id, historyLength: 1 }, options());
});
await step("cancel", async () => client.cancelTask({ id: (await startSlow()).id }, options()));
await step("resubscribe", async () => {
  const task = await startSlow();
  const reading = collect(client.resubscribeTask({ id: task.id }, options()));
  await sleep(500);
  await client.cancelTask({ id: task.id }, options());
  return reading;
});
await step("resubscribe_done", async () => {
  const task = await send(message("done already"));
  return collect(client.resubscribeTask({ id: task.id }, options()));
});

const pushed = {};
await step("push_set", async () => {
  pushed.task = (await startSlow()).id;
  return client.setTaskPushNotificationConfig(
    {
      taskId: pushed.task,
      pushNotificationConfig: { id: "hook-js03", url: `${webhook}/js03`, token: "tok-js03" },
    },
    options(),
  );
});
await step("push_get", () =>
  client.getTaskPushNotificationConfig({ id: pushed.task, pushNotificationConfigId: "hook-js03" }, options()),
);
await step("push_list", () => client.listTaskPushNotificationConfig({ id: pushed.task }, options()));
await step("push_delete", async () => {
  await client.deleteTaskPushNotificationConfig(
    { id: pushed.task, pushNotificationConfigId: "hook-js03" },
    options(),
  );
  const left = await client.listTaskPushNotificationConfig({ id: pushed.task }, options());
  await client.cancelTask({ id: pushed.task }, options());
  return left;
});

await step("parts", () =>
  send({
    kind: "message",
    messageId: randomUUID(),
    role: "user",
    parts: [
      { kind: "text", text: "parts", metadata: { k: "v" } },
      { kind: "file", file: { bytes: "+/8=", mimeType: "application/octet-stream", name: "b.bin" } },
      { kind: "file", file: { uri: "https://example.com/f.txt", mimeType: "text/plain" } },
      { kind: "data", data: { a: [1, 2] } },
    ],
  }),
);
await step("multi_turn", async () => {
  const first = await send(message("ask"));
  return [first, await send(message("the answer", first.id))];
});
await step("error", () => client.getTask({ id: "no-such-task" }, options()));
