"""Verifying a Nightjar webhook delivery (Standard Webhooks), with the standard library only.

A delivery carries webhook-id, webhook-timestamp and webhook-signature: one or more
space-separated "v1,<base64 HMAC-SHA256>" entries (during a secret rotation, one per live
secret). It is genuine when any entry matches the secret you hold and the timestamp is recent.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping

TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    """The delivery is not to be trusted: a header is missing, the timestamp is stale, or no signature matches."""


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance_seconds: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> Any:
    """Checks a delivery and returns its parsed JSON payload; raises WebhookVerificationError otherwise.

    secret is the endpoint's whsec_… secret; body the raw request body, exactly as received.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id")
    timestamp = lower.get("webhook-timestamp")
    signatures = lower.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number") from None
    current = time.time() if now is None else now
    if sent_at < current - tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is too old")
    if sent_at > current + tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is in the future")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{sent_at}.".encode() + raw, hashlib.sha256).digest())
    for entry in signatures.split(" "):
        version, _, signature = entry.partition(",")
        if version == "v1" and hmac.compare_digest(signature.encode(), expected):
            return json.loads(raw)
    raise WebhookVerificationError("no signature matches the secret")
