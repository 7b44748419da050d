"""The Nightjar Python SDK: a typed client generated from the operation contracts, standard library only.

    from nightjar_sdk import Nightjar
    nj = Nightjar("http://127.0.0.1:8080", token=os.environ["NIGHTJAR_KEY"])
    s = nj.sessions.create()
    nj.sessions.navigate(s["id"], "https://example.com/")
    page = nj.sessions.perceive(s["id"])
"""
from ._client import UNSET, NightjarError, Unset, VideoDownload
from ._generated import ROUTES, Nightjar
from .webhooks import WebhookVerificationError, verify_webhook

__all__ = ["ROUTES", "UNSET", "Nightjar", "NightjarError", "Unset", "VideoDownload", "WebhookVerificationError", "verify_webhook"]
