"""Reads v0.3 JSON objects with the official ``a2a-sdk`` 0.3.x pydantic models.

Run ONLY in the virtualenv with ``a2a-sdk==0.3.*`` (``sdk03_python`` in
``tests/interop/conftest.py``): the 0.3 SDK cannot share a process with ours.

    python tests/dialects/sdk03_read.py < objects.jsonl

Each input line is ``{"type": <our rule name>, "value": <v0.3 JSON>}``; each
output line is ``{"ok": true, "dump": <what the SDK read, dumped back>}`` or
``{"ok": false, "error": <the validation error>}``. ``dump`` holds only the
fields the SDK model has (unknown names are dropped on reading), so a field
we write under a name v0.3 does not have shows up as a difference.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import a2a.types as t
from pydantic import TypeAdapter

MODELS: dict[str, Any] = {
    "Part": t.Part,
    "Message": t.Message,
    "TaskStatus": t.TaskStatus,
    "Artifact": t.Artifact,
    "Task": t.Task,
    "TaskStatusUpdateEvent": t.TaskStatusUpdateEvent,
    "TaskArtifactUpdateEvent": t.TaskArtifactUpdateEvent,
    "StreamResponse": t.Message | t.Task | t.TaskStatusUpdateEvent | t.TaskArtifactUpdateEvent,
    "SendMessageResponse": t.Message | t.Task,
    "AuthenticationInfo": t.PushNotificationAuthenticationInfo,
    "PushNotificationConfig": t.PushNotificationConfig,
    "TaskPushNotificationConfig": t.TaskPushNotificationConfig,
    "SendMessageConfiguration": t.MessageSendConfiguration,
    "SendMessageRequest": t.MessageSendParams,
    "GetTaskRequest": t.TaskQueryParams,
    "CancelTaskRequest": t.TaskIdParams,
    "SubscribeToTaskRequest": t.TaskIdParams,
    "GetTaskPushNotificationConfigRequest": t.GetTaskPushNotificationConfigParams,
    "ListTaskPushNotificationConfigsRequest": t.ListTaskPushNotificationConfigParams,
    "DeleteTaskPushNotificationConfigRequest": t.DeleteTaskPushNotificationConfigParams,
    "SecurityScheme": t.SecurityScheme,
    "SecurityRequirement": dict[str, list[str]],
    "AgentSkill": t.AgentSkill,
    "AgentCapabilities": t.AgentCapabilities,
    "AgentCard": t.AgentCard,
}


def read(type_name: str, value: Any) -> dict[str, Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(MODELS[type_name])
    try:
        obj = adapter.validate_python(value)
    except Exception as exc:  # the SDK refused it: report why
        return {"ok": False, "error": str(exc)}
    return {"ok": True, "dump": adapter.dump_python(obj, mode="json", by_alias=True, exclude_unset=True)}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            record = json.loads(line)
            print(json.dumps(read(record["type"], record["value"])), flush=True)


if __name__ == "__main__":
    main()
