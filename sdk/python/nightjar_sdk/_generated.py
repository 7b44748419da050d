# Generated from contracts/operations/index.ts by scripts/gen-sdk-python.ts — do not edit.
from __future__ import annotations

from typing import Any, Callable, Literal, NotRequired, TypedDict

from ._client import UNSET, Transport, Unset

ROUTES: dict[str, tuple[str, str]] = {
    "me": ("GET", "/v1/me"),
    "key_create": ("POST", "/v1/keys"),
    "audit_list": ("GET", "/v1/audit"),
    "identity_list_assumable": ("GET", "/v1/identities/assumable"),
    "identity_create": ("POST", "/v1/identities"),
    "identity_list": ("GET", "/v1/identities"),
    "identity_delete": ("DELETE", "/v1/identities/:identityId"),
    "identity_proxy_put": ("PUT", "/v1/identities/:identityId/proxy"),
    "identity_proxy_delete": ("DELETE", "/v1/identities/:identityId/proxy"),
    "credential_create": ("POST", "/v1/identities/:identityId/credentials"),
    "credential_list": ("GET", "/v1/identities/:identityId/credentials"),
    "credential_rotate": ("POST", "/v1/identities/:identityId/credentials/:credentialId/rotate"),
    "credential_delete": ("DELETE", "/v1/identities/:identityId/credentials/:credentialId"),
    "grant_create": ("POST", "/v1/identities/:identityId/grants"),
    "grant_list": ("GET", "/v1/identities/:identityId/grants"),
    "grant_revoke": ("POST", "/v1/identities/:identityId/grants/:grantId/revoke"),
    "grant_delete": ("DELETE", "/v1/identities/:identityId/grants/:grantId"),
    "governance_get": ("GET", "/v1/governance"),
    "governance_put": ("PUT", "/v1/governance"),
    "credential_request": ("POST", "/v1/credential-requests"),
    "authstate_capture": ("POST", "/v1/sessions/:sessionId/authstate"),
    "authstate_list": ("GET", "/v1/identities/:identityId/authstates"),
    "session_start": ("POST", "/v1/sessions"),
    "spawn_and_start_session": ("POST", "/v1/sessions/spawn"),
    "session_get": ("GET", "/v1/sessions/:sessionId"),
    "session_list": ("GET", "/v1/sessions"),
    "session_end": ("DELETE", "/v1/sessions/:sessionId"),
    "session_journal": ("GET", "/v1/sessions/:sessionId/journal"),
    "session_cdp": ("GET", "/v1/sessions/:sessionId/cdp"),
    "request_human": ("POST", "/v1/sessions/:sessionId/request-human"),
    "navigate": ("POST", "/v1/sessions/:sessionId/navigate"),
    "perceive": ("POST", "/v1/sessions/:sessionId/perceive"),
    "act": ("POST", "/v1/sessions/:sessionId/act"),
    "credential_fill": ("POST", "/v1/sessions/:sessionId/fill-credential"),
    "screenshot": ("POST", "/v1/sessions/:sessionId/screenshot"),
    "go_back": ("POST", "/v1/sessions/:sessionId/go-back"),
    "reload": ("POST", "/v1/sessions/:sessionId/reload"),
    "wait_for": ("POST", "/v1/sessions/:sessionId/wait-for"),
    "select_option": ("POST", "/v1/sessions/:sessionId/select-option"),
    "hover": ("POST", "/v1/sessions/:sessionId/hover"),
    "pdf": ("POST", "/v1/sessions/:sessionId/pdf"),
    "console_messages": ("GET", "/v1/sessions/:sessionId/console"),
    "go_forward": ("POST", "/v1/sessions/:sessionId/go-forward"),
    "tab_list": ("GET", "/v1/sessions/:sessionId/tabs"),
    "tab_open": ("POST", "/v1/sessions/:sessionId/tabs/open"),
    "tab_select": ("POST", "/v1/sessions/:sessionId/tabs/select"),
    "tab_close": ("POST", "/v1/sessions/:sessionId/tabs/close"),
    "dialog_handle": ("POST", "/v1/sessions/:sessionId/dialog"),
    "resize": ("POST", "/v1/sessions/:sessionId/resize"),
    "drag": ("POST", "/v1/sessions/:sessionId/drag"),
    "mouse_click": ("POST", "/v1/sessions/:sessionId/mouse-click"),
    "mouse_move": ("POST", "/v1/sessions/:sessionId/mouse-move"),
    "mouse_wheel": ("POST", "/v1/sessions/:sessionId/mouse-wheel"),
    "fill_form": ("POST", "/v1/sessions/:sessionId/fill-form"),
    "file_put": ("POST", "/v1/sessions/:sessionId/files"),
    "file_upload": ("POST", "/v1/sessions/:sessionId/file-upload"),
    "file_list": ("GET", "/v1/sessions/:sessionId/files"),
    "file_read": ("GET", "/v1/sessions/:sessionId/files/:fileId"),
    "network_requests": ("GET", "/v1/sessions/:sessionId/network"),
    "evaluate": ("POST", "/v1/sessions/:sessionId/evaluate"),
    "network_list": ("GET", "/v1/networks"),
    "network_create": ("POST", "/v1/networks"),
    "network_update": ("PATCH", "/v1/networks/:networkId"),
    "network_rotate_token": ("POST", "/v1/networks/:networkId/rotate-token"),
    "network_delete": ("DELETE", "/v1/networks/:networkId"),
    "network_daemons": ("GET", "/v1/networks/:networkId/daemons"),
    "local_reach_ensure": ("POST", "/v1/local-reach/ensure"),
    "network_reach_grant_create": ("POST", "/v1/local-reach/grants"),
    "network_reach_grant_list": ("GET", "/v1/local-reach/grants"),
    "network_reach_grant_revoke": ("POST", "/v1/local-reach/grants/:grantId/revoke"),
    "session_recording_get": ("GET", "/v1/sessions/:sessionId/recording"),
    "session_recording_events": ("GET", "/v1/sessions/:sessionId/recording/events"),
    "webhook_create": ("POST", "/v1/webhooks"),
    "webhook_list": ("GET", "/v1/webhooks"),
    "webhook_delete": ("DELETE", "/v1/webhooks/:webhookId"),
    "webhook_rotate_secret": ("POST", "/v1/webhooks/:webhookId/rotate-secret"),
    "webhook_deliveries": ("GET", "/v1/webhooks/:webhookId/deliveries"),
    "webhook_enable": ("POST", "/v1/webhooks/:webhookId/enable"),
    "extension_upload": ("POST", "/v1/extensions"),
    "extension_list": ("GET", "/v1/extensions"),
    "extension_get": ("GET", "/v1/extensions/:extensionId"),
    "extension_trust": ("PUT", "/v1/extensions/:extensionId/trust"),
    "extension_delete": ("DELETE", "/v1/extensions/:extensionId"),
    "identity_extensions_put": ("PUT", "/v1/identities/:identityId/extensions"),
}

MeOutputPrincipal = TypedDict("MeOutputPrincipal", {
    "kind": Literal["key", "oauth", "console"],
    "principalId": str,
    "credentialId": str,
    "name": str,
})

MeOutput = TypedDict("MeOutput", {
    "orgId": str,
    "agentId": str,
    "scopes": list[str],
    "principal": MeOutputPrincipal,
})

KeyCreateInput = TypedDict("KeyCreateInput", {
    "name": str,
    "scopes": list[str],
    "agent": NotRequired[str],
})

KeyCreateOutput = TypedDict("KeyCreateOutput", {
    "id": str,
    "name": str,
    "scopes": list[str],
    "agentId": str | None,
    "secret": str,
})

AuditListInput = TypedDict("AuditListInput", {
    "after": NotRequired[int],
    "limit": NotRequired[int],
    "action": NotRequired[str],
})

AuditListOutputItemsItem = TypedDict("AuditListOutputItemsItem", {
    "id": str,
    "orgId": str,
    "actor": str,
    "action": str,
    "targetType": NotRequired[str],
    "targetId": NotRequired[str],
    "identityId": NotRequired[str],
    "credentialId": NotRequired[str],
    "grantId": NotRequired[str],
    "sessionId": NotRequired[str],
    "credentialName": NotRequired[str],
    "host": NotRequired[str],
    "fieldKind": NotRequired[str],
    "reason": NotRequired[str],
    "extensionIds": NotRequired[list[str]],
    "createdAt": str,
})

AuditListOutput = TypedDict("AuditListOutput", {
    "items": list[AuditListOutputItemsItem],
    "next": str | None,
})

IdentityListAssumableOutputItemCredentialSlotsItem = TypedDict("IdentityListAssumableOutputItemCredentialSlotsItem", {
    "name": str,
    "placeholder": str,
    "allowedOrigins": list[str],
})

IdentityListAssumableOutputItem = TypedDict("IdentityListAssumableOutputItem", {
    "id": str,
    "name": str,
    "grantRole": Literal["assume", "manage"],
    "leaseState": Literal["available", "in_use"],
    "openModes": list[Literal["exclusive", "fork", "readonly"]],
    "credentialSlots": list[IdentityListAssumableOutputItemCredentialSlotsItem],
})

IdentityListAssumableOutput = list[IdentityListAssumableOutputItem]

IdentityCreateInput = TypedDict("IdentityCreateInput", {
    "name": str,
    "defaultOpenMode": NotRequired[Literal["exclusive", "fork", "readonly"]],
})

IdentityCreateOutput = TypedDict("IdentityCreateOutput", {
    "id": str,
    "name": str,
    "defaultOpenMode": Literal["exclusive", "fork", "readonly"],
    "createdAt": str,
})

IdentityListOutputItemProxy = TypedDict("IdentityListOutputItemProxy", {
    "url": str,
    "authenticated": bool,
})

IdentityListOutputItem = TypedDict("IdentityListOutputItem", {
    "id": str,
    "name": str,
    "defaultOpenMode": Literal["exclusive", "fork", "readonly"],
    "createdAt": str,
    "leaseState": Literal["available", "in_use"],
    "proxy": NotRequired[IdentityListOutputItemProxy],
})

IdentityListOutput = list[IdentityListOutputItem]

IdentityDeleteInput = TypedDict("IdentityDeleteInput", {
    "identityId": str,
})

IdentityProxyPutInput = TypedDict("IdentityProxyPutInput", {
    "identityId": str,
    "url": str,
    "username": NotRequired[str],
    "password": NotRequired[str],
})

IdentityProxyPutOutput = TypedDict("IdentityProxyPutOutput", {
    "url": str,
    "authenticated": bool,
})

IdentityProxyDeleteInput = TypedDict("IdentityProxyDeleteInput", {
    "identityId": str,
})

CredentialCreateInput = TypedDict("CredentialCreateInput", {
    "identityId": str,
    "name": str,
    "placeholder": NotRequired[str],
    "kind": NotRequired[Literal["password", "totp"]],
    "value": str,
    "originAllowlist": list[str],
})

CredentialCreateOutput = TypedDict("CredentialCreateOutput", {
    "id": str,
    "identityId": str,
    "name": str,
    "placeholder": str,
    "kind": Literal["password", "totp"],
    "maskedValue": str,
    "originAllowlist": list[str],
    "createdAt": str,
    "rotatedAt": str | None,
})

CredentialListInput = TypedDict("CredentialListInput", {
    "identityId": str,
})

CredentialListOutputItem = TypedDict("CredentialListOutputItem", {
    "id": str,
    "identityId": str,
    "name": str,
    "placeholder": str,
    "kind": Literal["password", "totp"],
    "maskedValue": str,
    "originAllowlist": list[str],
    "createdAt": str,
    "rotatedAt": str | None,
})

CredentialListOutput = list[CredentialListOutputItem]

CredentialRotateInput = TypedDict("CredentialRotateInput", {
    "identityId": str,
    "credentialId": str,
    "value": str,
})

CredentialRotateOutput = TypedDict("CredentialRotateOutput", {
    "id": str,
    "identityId": str,
    "name": str,
    "placeholder": str,
    "kind": Literal["password", "totp"],
    "maskedValue": str,
    "originAllowlist": list[str],
    "createdAt": str,
    "rotatedAt": str | None,
})

CredentialDeleteInput = TypedDict("CredentialDeleteInput", {
    "identityId": str,
    "credentialId": str,
})

GrantCreateInput = TypedDict("GrantCreateInput", {
    "identityId": str,
    "principalAgentId": str,
    "role": Literal["assume", "manage"],
    "expiresAt": str,
    "allowedOrigins": list[str],
    "propagation": Literal["none", "same_conversation", "descendants"],
    "maxSessionDurationSecs": int | None,
    "reason": str,
    "principalUserId": NotRequired[str | None],
    "principalOrgRole": NotRequired[Literal["owner", "admin", "member"] | None],
})

GrantCreateOutput = TypedDict("GrantCreateOutput", {
    "id": str,
    "identityId": str,
    "principalAgentId": str,
    "principalUserId": str | None,
    "principalOrgRole": Literal["owner", "admin", "member"] | None,
    "role": Literal["assume", "manage"],
    "expiresAt": str,
    "allowedOrigins": list[str],
    "propagation": Literal["none", "same_conversation", "descendants"],
    "maxSessionDurationSecs": int | None,
    "reason": str,
    "createdByUserId": str | None,
    "createdAt": str,
    "revokedAt": str | None,
    "revoked_at": str | None,
    "state": Literal["live", "expired", "revoked"],
})

GrantListInput = TypedDict("GrantListInput", {
    "identityId": str,
})

GrantListOutputItem = TypedDict("GrantListOutputItem", {
    "id": str,
    "identityId": str,
    "principalAgentId": str,
    "principalUserId": str | None,
    "principalOrgRole": Literal["owner", "admin", "member"] | None,
    "role": Literal["assume", "manage"],
    "expiresAt": str,
    "allowedOrigins": list[str],
    "propagation": Literal["none", "same_conversation", "descendants"],
    "maxSessionDurationSecs": int | None,
    "reason": str,
    "createdByUserId": str | None,
    "createdAt": str,
    "revokedAt": str | None,
    "revoked_at": str | None,
    "state": Literal["live", "expired", "revoked"],
})

GrantListOutput = list[GrantListOutputItem]

GrantRevokeInput = TypedDict("GrantRevokeInput", {
    "identityId": str,
    "grantId": str,
})

GrantDeleteInput = TypedDict("GrantDeleteInput", {
    "identityId": str,
    "grantId": str,
})

GovernanceGetOutput = TypedDict("GovernanceGetOutput", {
    "credential_freetext_fill": bool,
    "cloakEnabled": bool,
    "declaredAdvisorOrigins": list[str],
    "recordSessions": bool,
    "videoSessions": bool,
    "videoMaxSeconds": int | None,
    "videoMaxMiB": int | None,
    "proxyHosts": list[str],
})

GovernancePutInput = TypedDict("GovernancePutInput", {
    "credential_freetext_fill": NotRequired[bool],
    "cloakEnabled": NotRequired[bool],
    "declaredAdvisorOrigins": NotRequired[list[str]],
    "recordSessions": NotRequired[bool],
    "videoSessions": NotRequired[bool],
    "videoMaxSeconds": NotRequired[int | None],
    "videoMaxMiB": NotRequired[int | None],
    "proxyHosts": NotRequired[list[str]],
})

GovernancePutOutput = TypedDict("GovernancePutOutput", {
    "credential_freetext_fill": bool,
    "cloakEnabled": bool,
    "declaredAdvisorOrigins": list[str],
    "recordSessions": bool,
    "videoSessions": bool,
    "videoMaxSeconds": int | None,
    "videoMaxMiB": int | None,
    "proxyHosts": list[str],
})

CredentialRequestInput = TypedDict("CredentialRequestInput", {
    "identity": str,
    "credentialName": str,
    "originAllowlist": list[str],
    "reason": str,
})

CredentialRequestOutput = TypedDict("CredentialRequestOutput", {
    "id": str,
    "identityId": str,
    "credentialName": str,
    "url": str,
    "expiresAt": str,
    "status": Literal["pending", "completed", "declined", "cancelled", "expired"],
    "elicited": bool,
})

AuthstateCaptureInput = TypedDict("AuthstateCaptureInput", {
    "sessionId": str,
})

AuthstateCaptureOutput = TypedDict("AuthstateCaptureOutput", {
    "id": str,
    "identityId": str,
    "createdAt": str,
    "createdBy": str,
    "origins": list[str],
})

AuthstateListInput = TypedDict("AuthstateListInput", {
    "identityId": str,
})

AuthstateListOutputItem = TypedDict("AuthstateListOutputItem", {
    "id": str,
    "identityId": str,
    "createdAt": str,
    "createdBy": str,
    "origins": list[str],
})

AuthstateListOutput = list[AuthstateListOutputItem]

SessionStartInputViewport = TypedDict("SessionStartInputViewport", {
    "width": int,
    "height": int,
})

SessionStartInputVideoVariant2 = TypedDict("SessionStartInputVideoVariant2", {
    "format": NotRequired[Literal["webm", "mp4"]],
    "fps": NotRequired[int],
    "width": NotRequired[int],
})

SessionStartInputProxy = TypedDict("SessionStartInputProxy", {
    "url": str,
    "username": NotRequired[str],
    "password": NotRequired[str],
})

SessionStartInput = TypedDict("SessionStartInput", {
    "identity": NotRequired[str],
    "egress": NotRequired[Literal["local", "split", "platform"]],
    "network": NotRequired[str],
    "viewport": NotRequired[SessionStartInputViewport],
    "url": NotRequired[str],
    "browserKind": NotRequired[Literal["chromium", "cloak"]],
    "warmResume": NotRequired[bool],
    "fromVersion": NotRequired[str],
    "agent": NotRequired[str],
    "idleTimeoutSecs": NotRequired[int],
    "maxDurationSecs": NotRequired[int],
    "record": NotRequired[bool],
    "video": NotRequired[bool | SessionStartInputVideoVariant2],
    "proxy": NotRequired[SessionStartInputProxy],
    "extensions": NotRequired[list[str]],
    "waitSeconds": NotRequired[int],
})

SessionStartOutputOpenedBy = TypedDict("SessionStartOutputOpenedBy", {
    "principalId": str,
    "credentialId": str,
    "name": str,
})

SessionStartOutputViewport = TypedDict("SessionStartOutputViewport", {
    "width": int,
    "height": int,
})

SessionStartOutputProxy = TypedDict("SessionStartOutputProxy", {
    "url": str,
    "authenticated": bool,
})

SessionStartOutput = TypedDict("SessionStartOutput", {
    "id": str,
    "status": Literal["pending", "live", "ended", "failed"],
    "egress": Literal["local", "split", "platform"],
    "network": str | None,
    "openedBy": SessionStartOutputOpenedBy,
    "identity": str | None,
    "agentId": str,
    "browserKind": Literal["chromium", "cloak"],
    "url": str | None,
    "viewport": SessionStartOutputViewport | None,
    "createdAt": str,
    "liveAt": str | None,
    "endedAt": str | None,
    "failureReason": NotRequired[str],
    "sandbox": NotRequired[Literal["chromium", "chromium+gvisor", "gvisor", "none"]],
    "idleTimeoutSecs": int | None,
    "maxDurationSecs": int | None,
    "endReason": NotRequired[str],
    "queuePosition": NotRequired[int],
    "proxy": NotRequired[SessionStartOutputProxy],
    "control": Literal["agent", "human"],
    "extensions": NotRequired[list[str]],
})

SpawnAndStartSessionInputViewport = TypedDict("SpawnAndStartSessionInputViewport", {
    "width": int,
    "height": int,
})

SpawnAndStartSessionInput = TypedDict("SpawnAndStartSessionInput", {
    "childName": str,
    "identity": NotRequired[str],
    "egress": NotRequired[Literal["local", "split", "platform"]],
    "network": NotRequired[str],
    "viewport": NotRequired[SpawnAndStartSessionInputViewport],
})

SpawnAndStartSessionOutputOpenedBy = TypedDict("SpawnAndStartSessionOutputOpenedBy", {
    "principalId": str,
    "credentialId": str,
    "name": str,
})

SpawnAndStartSessionOutputViewport = TypedDict("SpawnAndStartSessionOutputViewport", {
    "width": int,
    "height": int,
})

SpawnAndStartSessionOutputProxy = TypedDict("SpawnAndStartSessionOutputProxy", {
    "url": str,
    "authenticated": bool,
})

SpawnAndStartSessionOutput = TypedDict("SpawnAndStartSessionOutput", {
    "id": str,
    "status": Literal["pending", "live", "ended", "failed"],
    "egress": Literal["local", "split", "platform"],
    "network": str | None,
    "openedBy": SpawnAndStartSessionOutputOpenedBy,
    "identity": str | None,
    "agentId": str,
    "browserKind": Literal["chromium", "cloak"],
    "url": str | None,
    "viewport": SpawnAndStartSessionOutputViewport | None,
    "createdAt": str,
    "liveAt": str | None,
    "endedAt": str | None,
    "failureReason": NotRequired[str],
    "sandbox": NotRequired[Literal["chromium", "chromium+gvisor", "gvisor", "none"]],
    "idleTimeoutSecs": int | None,
    "maxDurationSecs": int | None,
    "endReason": NotRequired[str],
    "queuePosition": NotRequired[int],
    "proxy": NotRequired[SpawnAndStartSessionOutputProxy],
    "control": Literal["agent", "human"],
    "extensions": NotRequired[list[str]],
})

SessionGetInput = TypedDict("SessionGetInput", {
    "sessionId": str,
    "waitSeconds": NotRequired[int],
})

SessionGetOutputOpenedBy = TypedDict("SessionGetOutputOpenedBy", {
    "principalId": str,
    "credentialId": str,
    "name": str,
})

SessionGetOutputViewport = TypedDict("SessionGetOutputViewport", {
    "width": int,
    "height": int,
})

SessionGetOutputProxy = TypedDict("SessionGetOutputProxy", {
    "url": str,
    "authenticated": bool,
})

SessionGetOutput = TypedDict("SessionGetOutput", {
    "id": str,
    "status": Literal["pending", "live", "ended", "failed"],
    "egress": Literal["local", "split", "platform"],
    "network": str | None,
    "openedBy": SessionGetOutputOpenedBy,
    "identity": str | None,
    "agentId": str,
    "browserKind": Literal["chromium", "cloak"],
    "url": str | None,
    "viewport": SessionGetOutputViewport | None,
    "createdAt": str,
    "liveAt": str | None,
    "endedAt": str | None,
    "failureReason": NotRequired[str],
    "sandbox": NotRequired[Literal["chromium", "chromium+gvisor", "gvisor", "none"]],
    "idleTimeoutSecs": int | None,
    "maxDurationSecs": int | None,
    "endReason": NotRequired[str],
    "queuePosition": NotRequired[int],
    "proxy": NotRequired[SessionGetOutputProxy],
    "control": Literal["agent", "human"],
    "extensions": NotRequired[list[str]],
})

SessionListInput = TypedDict("SessionListInput", {
    "status": NotRequired[Literal["pending", "live", "ended", "failed"]],
    "limit": NotRequired[int],
})

SessionListOutputItemsItemOpenedBy = TypedDict("SessionListOutputItemsItemOpenedBy", {
    "principalId": str,
    "credentialId": str,
    "name": str,
})

SessionListOutputItemsItemViewport = TypedDict("SessionListOutputItemsItemViewport", {
    "width": int,
    "height": int,
})

SessionListOutputItemsItemProxy = TypedDict("SessionListOutputItemsItemProxy", {
    "url": str,
    "authenticated": bool,
})

SessionListOutputItemsItem = TypedDict("SessionListOutputItemsItem", {
    "id": str,
    "status": Literal["pending", "live", "ended", "failed"],
    "egress": Literal["local", "split", "platform"],
    "network": str | None,
    "openedBy": SessionListOutputItemsItemOpenedBy,
    "identity": str | None,
    "agentId": str,
    "browserKind": Literal["chromium", "cloak"],
    "url": str | None,
    "viewport": SessionListOutputItemsItemViewport | None,
    "createdAt": str,
    "liveAt": str | None,
    "endedAt": str | None,
    "failureReason": NotRequired[str],
    "sandbox": NotRequired[Literal["chromium", "chromium+gvisor", "gvisor", "none"]],
    "idleTimeoutSecs": int | None,
    "maxDurationSecs": int | None,
    "endReason": NotRequired[str],
    "queuePosition": NotRequired[int],
    "proxy": NotRequired[SessionListOutputItemsItemProxy],
    "control": Literal["agent", "human"],
    "extensions": NotRequired[list[str]],
})

SessionListOutput = TypedDict("SessionListOutput", {
    "items": list[SessionListOutputItemsItem],
})

SessionEndInput = TypedDict("SessionEndInput", {
    "sessionId": str,
})

SessionEndOutputOpenedBy = TypedDict("SessionEndOutputOpenedBy", {
    "principalId": str,
    "credentialId": str,
    "name": str,
})

SessionEndOutputViewport = TypedDict("SessionEndOutputViewport", {
    "width": int,
    "height": int,
})

SessionEndOutputProxy = TypedDict("SessionEndOutputProxy", {
    "url": str,
    "authenticated": bool,
})

SessionEndOutput = TypedDict("SessionEndOutput", {
    "id": str,
    "status": Literal["pending", "live", "ended", "failed"],
    "egress": Literal["local", "split", "platform"],
    "network": str | None,
    "openedBy": SessionEndOutputOpenedBy,
    "identity": str | None,
    "agentId": str,
    "browserKind": Literal["chromium", "cloak"],
    "url": str | None,
    "viewport": SessionEndOutputViewport | None,
    "createdAt": str,
    "liveAt": str | None,
    "endedAt": str | None,
    "failureReason": NotRequired[str],
    "sandbox": NotRequired[Literal["chromium", "chromium+gvisor", "gvisor", "none"]],
    "idleTimeoutSecs": int | None,
    "maxDurationSecs": int | None,
    "endReason": NotRequired[str],
    "queuePosition": NotRequired[int],
    "proxy": NotRequired[SessionEndOutputProxy],
    "control": Literal["agent", "human"],
    "extensions": NotRequired[list[str]],
})

SessionJournalInput = TypedDict("SessionJournalInput", {
    "sessionId": str,
    "after": NotRequired[int],
    "limit": NotRequired[int],
})

SessionJournalOutputItemsItem = TypedDict("SessionJournalOutputItemsItem", {
    "id": str,
    "op": str,
    "detail": dict[str, Any],
    "outcome": Literal["ok", "error"],
    "errorCode": NotRequired[str],
    "durationMs": NotRequired[int],
    "at": str,
})

SessionJournalOutput = TypedDict("SessionJournalOutput", {
    "items": list[SessionJournalOutputItemsItem],
})

SessionCdpInput = TypedDict("SessionCdpInput", {
    "sessionId": str,
})

SessionCdpOutput = TypedDict("SessionCdpOutput", {
    "sessionId": str,
    "url": str,
    "protocol": Literal["cdp"],
    "httpUrl": str,
    "httpUrlExpiresAt": str,
})

RequestHumanInput = TypedDict("RequestHumanInput", {
    "sessionId": str,
    "reason": str,
})

RequestHumanOutputProxy = TypedDict("RequestHumanOutputProxy", {
    "url": str,
    "authenticated": bool,
})

RequestHumanOutput = TypedDict("RequestHumanOutput", {
    "sessionId": str,
    "url": str,
    "status": Literal["pending", "live", "ended", "failed"],
    "proxy": NotRequired[RequestHumanOutputProxy],
    "control": Literal["agent", "human"],
    "elicitation": NotRequired[Literal["completed", "declined", "cancelled", "expired"]],
})

NavigateInput = TypedDict("NavigateInput", {
    "sessionId": str,
    "url": str,
    "changes": NotRequired[bool],
})

NavigateOutput = TypedDict("NavigateOutput", {
    "url": str,
    "title": str,
    "status": int | None,
    "changes": NotRequired[str],
})

PerceiveInput = TypedDict("PerceiveInput", {
    "sessionId": str,
    "full": NotRequired[bool],
    "maxChars": NotRequired[int],
    "cursor": NotRequired[str],
    "ref": NotRequired[str],
    "query": NotRequired[str],
})

PerceiveOutput = TypedDict("PerceiveOutput", {
    "url": str,
    "title": str,
    "snapshot": str,
    "text": str,
    "truncated": NotRequired[bool],
    "cursor": NotRequired[str],
})

ActInput = TypedDict("ActInput", {
    "sessionId": str,
    "verb": Literal["click", "type", "press", "goto", "scroll"],
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "text": NotRequired[str],
    "key": NotRequired[str],
    "url": NotRequired[str],
    "direction": NotRequired[Literal["up", "down", "left", "right"]],
    "changes": NotRequired[bool],
})

ActOutputVariant1 = TypedDict("ActOutputVariant1", {
    "ok": Literal[True],
    "verb": Literal["click", "type", "press", "goto", "scroll"],
    "url": str,
    "title": NotRequired[str],
    "status": NotRequired[int | None],
    "changes": NotRequired[str],
})

ActOutputVariant2 = TypedDict("ActOutputVariant2", {
    "ok": Literal[True],
    "credentialName": str,
    "fieldKind": str,
    "host": str,
    "changes": NotRequired[str],
})

ActOutput = ActOutputVariant1 | ActOutputVariant2

CredentialFillInput = TypedDict("CredentialFillInput", {
    "sessionId": str,
    "credentialName": str,
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "changes": NotRequired[bool],
})

CredentialFillOutput = TypedDict("CredentialFillOutput", {
    "ok": Literal[True],
    "credentialName": str,
    "fieldKind": str,
    "host": str,
    "changes": NotRequired[str],
})

ScreenshotInput = TypedDict("ScreenshotInput", {
    "sessionId": str,
    "ref": NotRequired[str],
    "selector": NotRequired[str],
})

ScreenshotOutput = TypedDict("ScreenshotOutput", {
    "png": str,
})

GoBackInput = TypedDict("GoBackInput", {
    "sessionId": str,
    "changes": NotRequired[bool],
})

GoBackOutput = TypedDict("GoBackOutput", {
    "url": str,
    "title": str,
    "status": int | None,
    "changes": NotRequired[str],
})

ReloadInput = TypedDict("ReloadInput", {
    "sessionId": str,
    "changes": NotRequired[bool],
})

ReloadOutput = TypedDict("ReloadOutput", {
    "url": str,
    "title": str,
    "status": int | None,
    "changes": NotRequired[str],
})

WaitForInput = TypedDict("WaitForInput", {
    "sessionId": str,
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "text": NotRequired[str],
    "timeoutMs": NotRequired[int],
})

WaitForOutput = TypedDict("WaitForOutput", {
    "ok": Literal[True],
    "url": str,
    "changes": NotRequired[str],
})

SelectOptionInput = TypedDict("SelectOptionInput", {
    "sessionId": str,
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "values": list[str],
    "changes": NotRequired[bool],
})

SelectOptionOutput = TypedDict("SelectOptionOutput", {
    "ok": Literal[True],
    "url": str,
    "selected": list[str],
    "changes": NotRequired[str],
})

HoverInput = TypedDict("HoverInput", {
    "sessionId": str,
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "changes": NotRequired[bool],
})

HoverOutput = TypedDict("HoverOutput", {
    "ok": Literal[True],
    "url": str,
    "changes": NotRequired[str],
})

PdfInput = TypedDict("PdfInput", {
    "sessionId": str,
})

PdfOutput = TypedDict("PdfOutput", {
    "pdf": str,
})

ConsoleMessagesInput = TypedDict("ConsoleMessagesInput", {
    "sessionId": str,
})

ConsoleMessagesOutputMessagesItem = TypedDict("ConsoleMessagesOutputMessagesItem", {
    "type": str,
    "text": str,
    "time": float,
})

ConsoleMessagesOutput = TypedDict("ConsoleMessagesOutput", {
    "messages": list[ConsoleMessagesOutputMessagesItem],
})

GoForwardInput = TypedDict("GoForwardInput", {
    "sessionId": str,
    "changes": NotRequired[bool],
})

GoForwardOutput = TypedDict("GoForwardOutput", {
    "url": str,
    "title": str,
    "status": int | None,
    "changes": NotRequired[str],
})

TabListInput = TypedDict("TabListInput", {
    "sessionId": str,
})

TabListOutputTabsItem = TypedDict("TabListOutputTabsItem", {
    "tabId": str,
    "url": str,
    "title": str,
    "active": bool,
})

TabListOutput = TypedDict("TabListOutput", {
    "tabs": list[TabListOutputTabsItem],
    "activeTabId": str,
})

TabOpenInput = TypedDict("TabOpenInput", {
    "sessionId": str,
    "url": NotRequired[str],
})

TabOpenOutputTabsItem = TypedDict("TabOpenOutputTabsItem", {
    "tabId": str,
    "url": str,
    "title": str,
    "active": bool,
})

TabOpenOutput = TypedDict("TabOpenOutput", {
    "tabs": list[TabOpenOutputTabsItem],
    "activeTabId": str,
    "tabId": str,
    "status": int | None,
})

TabSelectInput = TypedDict("TabSelectInput", {
    "sessionId": str,
    "tabId": str,
})

TabSelectOutputTabsItem = TypedDict("TabSelectOutputTabsItem", {
    "tabId": str,
    "url": str,
    "title": str,
    "active": bool,
})

TabSelectOutput = TypedDict("TabSelectOutput", {
    "tabs": list[TabSelectOutputTabsItem],
    "activeTabId": str,
})

TabCloseInput = TypedDict("TabCloseInput", {
    "sessionId": str,
    "tabId": NotRequired[str],
})

TabCloseOutputTabsItem = TypedDict("TabCloseOutputTabsItem", {
    "tabId": str,
    "url": str,
    "title": str,
    "active": bool,
})

TabCloseOutput = TypedDict("TabCloseOutput", {
    "tabs": list[TabCloseOutputTabsItem],
    "activeTabId": str,
    "tabId": str,
    "closed": bool,
})

DialogHandleInput = TypedDict("DialogHandleInput", {
    "sessionId": str,
    "action": Literal["accept", "dismiss"],
    "promptText": NotRequired[str],
})

DialogHandleOutputArmed = TypedDict("DialogHandleOutputArmed", {
    "action": Literal["accept", "dismiss"],
})

DialogHandleOutputDialogsItem = TypedDict("DialogHandleOutputDialogsItem", {
    "tabId": str,
    "type": Literal["alert", "confirm", "prompt", "beforeunload"],
    "message": str,
    "defaultValue": NotRequired[str],
    "answer": Literal["accepted", "dismissed"],
    "answeredBy": Literal["armed", "default"],
    "time": float,
})

DialogHandleOutput = TypedDict("DialogHandleOutput", {
    "armed": DialogHandleOutputArmed,
    "dialogs": list[DialogHandleOutputDialogsItem],
})

ResizeInput = TypedDict("ResizeInput", {
    "sessionId": str,
    "width": int,
    "height": int,
})

ResizeOutputViewport = TypedDict("ResizeOutputViewport", {
    "width": int,
    "height": int,
})

ResizeOutput = TypedDict("ResizeOutput", {
    "ok": Literal[True],
    "url": str,
    "viewport": ResizeOutputViewport,
})

DragInput = TypedDict("DragInput", {
    "sessionId": str,
    "from": NotRequired[str],
    "fromRef": NotRequired[str],
    "to": NotRequired[str],
    "toRef": NotRequired[str],
    "changes": NotRequired[bool],
})

DragOutput = TypedDict("DragOutput", {
    "ok": Literal[True],
    "url": str,
    "changes": NotRequired[str],
})

MouseClickInput = TypedDict("MouseClickInput", {
    "sessionId": str,
    "x": float,
    "y": float,
    "button": NotRequired[Literal["left", "right", "middle"]],
    "clickCount": NotRequired[int],
    "changes": NotRequired[bool],
})

MouseClickOutput = TypedDict("MouseClickOutput", {
    "ok": Literal[True],
    "url": str,
    "changes": NotRequired[str],
})

MouseMoveInput = TypedDict("MouseMoveInput", {
    "sessionId": str,
    "x": float,
    "y": float,
    "steps": NotRequired[int],
})

MouseMoveOutput = TypedDict("MouseMoveOutput", {
    "ok": Literal[True],
    "url": str,
    "changes": NotRequired[str],
})

MouseWheelInput = TypedDict("MouseWheelInput", {
    "sessionId": str,
    "x": NotRequired[float],
    "y": NotRequired[float],
    "deltaX": NotRequired[float],
    "deltaY": NotRequired[float],
})

MouseWheelOutput = TypedDict("MouseWheelOutput", {
    "ok": Literal[True],
    "url": str,
    "changes": NotRequired[str],
})

FillFormInputFieldsItem = TypedDict("FillFormInputFieldsItem", {
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "value": str | bool | list[str],
})

FillFormInput = TypedDict("FillFormInput", {
    "sessionId": str,
    "fields": list[FillFormInputFieldsItem],
    "changes": NotRequired[bool],
})

FillFormOutputFieldsItem = TypedDict("FillFormOutputFieldsItem", {
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "kind": Literal["text", "checkbox", "radio", "select"],
})

FillFormOutput = TypedDict("FillFormOutput", {
    "ok": Literal[True],
    "url": str,
    "fields": list[FillFormOutputFieldsItem],
    "changes": NotRequired[str],
})

FilePutInput = TypedDict("FilePutInput", {
    "sessionId": str,
    "name": str,
    "contentBase64": str,
    "mimeType": NotRequired[str],
})

FilePutOutput = TypedDict("FilePutOutput", {
    "id": str,
    "name": str,
    "size": int | None,
    "mimeType": str,
    "source": Literal["upload", "download"],
    "state": Literal["in_progress", "complete", "refused", "failed"],
    "reason": NotRequired[str],
    "time": float,
})

FileUploadInput = TypedDict("FileUploadInput", {
    "sessionId": str,
    "selector": NotRequired[str],
    "ref": NotRequired[str],
    "files": list[str],
})

FileUploadOutputFilesItem = TypedDict("FileUploadOutputFilesItem", {
    "id": str,
    "name": str,
    "size": int | None,
    "mimeType": str,
    "source": Literal["upload", "download"],
    "state": Literal["in_progress", "complete", "refused", "failed"],
    "reason": NotRequired[str],
    "time": float,
})

FileUploadOutput = TypedDict("FileUploadOutput", {
    "ok": Literal[True],
    "url": str,
    "files": list[FileUploadOutputFilesItem],
})

FileListInput = TypedDict("FileListInput", {
    "sessionId": str,
})

FileListOutputFilesItem = TypedDict("FileListOutputFilesItem", {
    "id": str,
    "name": str,
    "size": int | None,
    "mimeType": str,
    "source": Literal["upload", "download"],
    "state": Literal["in_progress", "complete", "refused", "failed"],
    "reason": NotRequired[str],
    "time": float,
})

FileListOutput = TypedDict("FileListOutput", {
    "files": list[FileListOutputFilesItem],
})

FileReadInput = TypedDict("FileReadInput", {
    "sessionId": str,
    "fileId": str,
    "offset": NotRequired[int],
    "length": NotRequired[int],
})

FileReadOutputFile = TypedDict("FileReadOutputFile", {
    "id": str,
    "name": str,
    "size": int | None,
    "mimeType": str,
    "source": Literal["upload", "download"],
    "state": Literal["in_progress", "complete", "refused", "failed"],
    "reason": NotRequired[str],
    "time": float,
})

FileReadOutput = TypedDict("FileReadOutput", {
    "file": FileReadOutputFile,
    "offset": int,
    "bytes": int,
    "eof": bool,
    "contentBase64": str,
})

NetworkRequestsInput = TypedDict("NetworkRequestsInput", {
    "sessionId": str,
    "urlContains": NotRequired[str],
    "method": NotRequired[str],
    "resourceType": NotRequired[str],
    "limit": NotRequired[int],
})

NetworkRequestsOutputRequestsItem = TypedDict("NetworkRequestsOutputRequestsItem", {
    "method": str,
    "url": str,
    "status": int | None,
    "resourceType": str,
    "startedAt": float,
    "durationMs": float | None,
    "failure": str | None,
})

NetworkRequestsOutput = TypedDict("NetworkRequestsOutput", {
    "requests": list[NetworkRequestsOutputRequestsItem],
    "total": int,
    "dropped": int,
})

EvaluateInput = TypedDict("EvaluateInput", {
    "sessionId": str,
    "expression": str,
    "timeoutMs": NotRequired[int],
})

EvaluateOutput = TypedDict("EvaluateOutput", {
    "value": Any,
    "type": Literal["undefined", "null", "boolean", "number", "string", "array", "object"],
})

NetworkListOutputItem = TypedDict("NetworkListOutputItem", {
    "id": str,
    "name": str,
    "daemonCount": int,
    "onlineDaemonCount": int,
    "declaredHosts": list[str],
})

NetworkListOutput = list[NetworkListOutputItem]

NetworkCreateInput = TypedDict("NetworkCreateInput", {
    "name": str,
})

NetworkCreateOutputNetwork = TypedDict("NetworkCreateOutputNetwork", {
    "id": str,
    "name": str,
    "daemonCount": int,
    "onlineDaemonCount": int,
})

NetworkCreateOutputToken = TypedDict("NetworkCreateOutputToken", {
    "tokenId": str,
    "secret": str,
})

NetworkCreateOutput = TypedDict("NetworkCreateOutput", {
    "network": NetworkCreateOutputNetwork,
    "token": NetworkCreateOutputToken,
})

NetworkUpdateInput = TypedDict("NetworkUpdateInput", {
    "networkId": str,
    "declaredHosts": list[str],
})

NetworkUpdateOutput = TypedDict("NetworkUpdateOutput", {
    "id": str,
    "name": str,
    "daemonCount": int,
    "onlineDaemonCount": int,
    "declaredHosts": list[str],
})

NetworkRotateTokenInput = TypedDict("NetworkRotateTokenInput", {
    "networkId": str,
})

NetworkRotateTokenOutputNetwork = TypedDict("NetworkRotateTokenOutputNetwork", {
    "id": str,
    "name": str,
    "daemonCount": int,
    "onlineDaemonCount": int,
    "declaredHosts": list[str],
})

NetworkRotateTokenOutputToken = TypedDict("NetworkRotateTokenOutputToken", {
    "tokenId": str,
    "secret": str,
})

NetworkRotateTokenOutput = TypedDict("NetworkRotateTokenOutput", {
    "network": NetworkRotateTokenOutputNetwork,
    "token": NetworkRotateTokenOutputToken,
})

NetworkDeleteInput = TypedDict("NetworkDeleteInput", {
    "networkId": str,
})

NetworkDaemonsInput = TypedDict("NetworkDaemonsInput", {
    "networkId": str,
})

NetworkDaemonsOutputItem = TypedDict("NetworkDaemonsOutputItem", {
    "id": str,
    "host": str,
    "version": str,
    "connectedSince": str,
    "reachable": bool,
})

NetworkDaemonsOutput = list[NetworkDaemonsOutputItem]

LocalReachEnsureInput = TypedDict("LocalReachEnsureInput", {
    "target": str,
    "network": NotRequired[str],
})

LocalReachEnsureOutputNetwork = TypedDict("LocalReachEnsureOutputNetwork", {
    "id": str,
    "name": str,
    "daemonCount": int,
    "onlineDaemonCount": int,
    "declaredHosts": list[str],
})

LocalReachEnsureOutputToken = TypedDict("LocalReachEnsureOutputToken", {
    "tokenId": str,
    "secret": str,
})

LocalReachEnsureOutput = TypedDict("LocalReachEnsureOutput", {
    "network": LocalReachEnsureOutputNetwork,
    "declared": str,
    "created": bool,
    "token": NotRequired[LocalReachEnsureOutputToken],
})

NetworkReachGrantCreateInput = TypedDict("NetworkReachGrantCreateInput", {
    "agentId": str,
    "networkId": NotRequired[str],
})

NetworkReachGrantCreateOutput = TypedDict("NetworkReachGrantCreateOutput", {
    "id": str,
    "agentId": str,
    "kind": Literal["network", "seed"],
    "networkId": str | None,
    "state": Literal["live", "revoked", "ended"],
    "createdBy": str,
    "createdAt": str,
    "revokedAt": str | None,
})

NetworkReachGrantListInput = TypedDict("NetworkReachGrantListInput", {
    "agentId": NotRequired[str],
})

NetworkReachGrantListOutputItem = TypedDict("NetworkReachGrantListOutputItem", {
    "id": str,
    "agentId": str,
    "kind": Literal["network", "seed"],
    "networkId": str | None,
    "state": Literal["live", "revoked", "ended"],
    "createdBy": str,
    "createdAt": str,
    "revokedAt": str | None,
})

NetworkReachGrantListOutput = list[NetworkReachGrantListOutputItem]

NetworkReachGrantRevokeInput = TypedDict("NetworkReachGrantRevokeInput", {
    "grantId": str,
})

SessionRecordingGetInput = TypedDict("SessionRecordingGetInput", {
    "sessionId": str,
})

SessionRecordingGetOutput = TypedDict("SessionRecordingGetOutput", {
    "sessionId": str,
    "format": Literal["rrweb"],
    "startedAt": str,
    "endedAt": str | None,
    "bytes": int,
    "events": int,
    "dropped": int,
    "eventsUrl": str,
    "consoleUrl": str,
})

SessionRecordingEventsInput = TypedDict("SessionRecordingEventsInput", {
    "sessionId": str,
})

SessionRecordingEventsOutput = TypedDict("SessionRecordingEventsOutput", {
    "sessionId": str,
    "format": Literal["rrweb"],
    "events": list[dict[str, Any]],
})

WebhookCreateInput = TypedDict("WebhookCreateInput", {
    "url": str,
    "events": list[Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"]],
    "description": NotRequired[str],
})

WebhookCreateOutputWebhookDisabled = TypedDict("WebhookCreateOutputWebhookDisabled", {
    "since": str,
    "reason": Literal["consecutive_failures"],
    "failures": int,
    "failingSince": str,
})

WebhookCreateOutputWebhook = TypedDict("WebhookCreateOutputWebhook", {
    "id": str,
    "url": str,
    "events": list[Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"]],
    "description": str,
    "createdAt": str,
    "createdBy": str,
    "disabled": WebhookCreateOutputWebhookDisabled | None,
    "previousSecretExpiresAt": str | None,
})

WebhookCreateOutput = TypedDict("WebhookCreateOutput", {
    "webhook": WebhookCreateOutputWebhook,
    "secret": str,
})

WebhookListOutputItemDisabled = TypedDict("WebhookListOutputItemDisabled", {
    "since": str,
    "reason": Literal["consecutive_failures"],
    "failures": int,
    "failingSince": str,
})

WebhookListOutputItem = TypedDict("WebhookListOutputItem", {
    "id": str,
    "url": str,
    "events": list[Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"]],
    "description": str,
    "createdAt": str,
    "createdBy": str,
    "disabled": WebhookListOutputItemDisabled | None,
    "previousSecretExpiresAt": str | None,
})

WebhookListOutput = list[WebhookListOutputItem]

WebhookDeleteInput = TypedDict("WebhookDeleteInput", {
    "webhookId": str,
})

WebhookRotateSecretInput = TypedDict("WebhookRotateSecretInput", {
    "webhookId": str,
    "overlapSeconds": NotRequired[int],
})

WebhookRotateSecretOutputWebhookDisabled = TypedDict("WebhookRotateSecretOutputWebhookDisabled", {
    "since": str,
    "reason": Literal["consecutive_failures"],
    "failures": int,
    "failingSince": str,
})

WebhookRotateSecretOutputWebhook = TypedDict("WebhookRotateSecretOutputWebhook", {
    "id": str,
    "url": str,
    "events": list[Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"]],
    "description": str,
    "createdAt": str,
    "createdBy": str,
    "disabled": WebhookRotateSecretOutputWebhookDisabled | None,
    "previousSecretExpiresAt": str | None,
})

WebhookRotateSecretOutput = TypedDict("WebhookRotateSecretOutput", {
    "webhook": WebhookRotateSecretOutputWebhook,
    "secret": str,
})

WebhookDeliveriesInput = TypedDict("WebhookDeliveriesInput", {
    "webhookId": str,
    "before": NotRequired[str],
    "limit": NotRequired[int],
})

WebhookDeliveriesOutputItemsItemAttemptsItem = TypedDict("WebhookDeliveriesOutputItemsItemAttemptsItem", {
    "at": str,
    "responseStatus": int | None,
    "error": str | None,
    "durationMs": int,
})

WebhookDeliveriesOutputItemsItem = TypedDict("WebhookDeliveriesOutputItemsItem", {
    "id": str,
    "webhookId": str,
    "eventId": str,
    "eventType": Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"],
    "state": Literal["pending", "delivered", "failed"],
    "attempts": list[WebhookDeliveriesOutputItemsItemAttemptsItem],
    "nextAttemptAt": str | None,
    "createdAt": str,
    "deliveredAt": str | None,
})

WebhookDeliveriesOutput = TypedDict("WebhookDeliveriesOutput", {
    "items": list[WebhookDeliveriesOutputItemsItem],
    "next": str | None,
})

WebhookEnableInput = TypedDict("WebhookEnableInput", {
    "webhookId": str,
})

WebhookEnableOutputDisabled = TypedDict("WebhookEnableOutputDisabled", {
    "since": str,
    "reason": Literal["consecutive_failures"],
    "failures": int,
    "failingSince": str,
})

WebhookEnableOutput = TypedDict("WebhookEnableOutput", {
    "id": str,
    "url": str,
    "events": list[Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"]],
    "description": str,
    "createdAt": str,
    "createdBy": str,
    "disabled": WebhookEnableOutputDisabled | None,
    "previousSecretExpiresAt": str | None,
})

ExtensionUploadInput = TypedDict("ExtensionUploadInput", {
    "zipBase64": str,
})

ExtensionUploadOutputContentScriptsItem = TypedDict("ExtensionUploadOutputContentScriptsItem", {
    "matches": list[str],
    "js": list[str],
    "css": list[str],
    "allFrames": bool,
})

ExtensionUploadOutput = TypedDict("ExtensionUploadOutput", {
    "id": str,
    "name": str,
    "version": str,
    "description": str | None,
    "sha256": str,
    "bytes": int,
    "permissions": list[str],
    "optionalPermissions": list[str],
    "hostPermissions": list[str],
    "contentScripts": list[ExtensionUploadOutputContentScriptsItem],
    "serviceWorker": str | None,
    "trusted": bool,
    "trustDecidedBy": str | None,
    "trustDecidedAt": str | None,
    "trustReason": str | None,
    "createdBy": str,
    "createdAt": str,
})

ExtensionListOutputItemsItemContentScriptsItem = TypedDict("ExtensionListOutputItemsItemContentScriptsItem", {
    "matches": list[str],
    "js": list[str],
    "css": list[str],
    "allFrames": bool,
})

ExtensionListOutputItemsItem = TypedDict("ExtensionListOutputItemsItem", {
    "id": str,
    "name": str,
    "version": str,
    "description": str | None,
    "sha256": str,
    "bytes": int,
    "permissions": list[str],
    "optionalPermissions": list[str],
    "hostPermissions": list[str],
    "contentScripts": list[ExtensionListOutputItemsItemContentScriptsItem],
    "serviceWorker": str | None,
    "trusted": bool,
    "trustDecidedBy": str | None,
    "trustDecidedAt": str | None,
    "trustReason": str | None,
    "createdBy": str,
    "createdAt": str,
})

ExtensionListOutput = TypedDict("ExtensionListOutput", {
    "items": list[ExtensionListOutputItemsItem],
})

ExtensionGetInput = TypedDict("ExtensionGetInput", {
    "extensionId": str,
})

ExtensionGetOutputContentScriptsItem = TypedDict("ExtensionGetOutputContentScriptsItem", {
    "matches": list[str],
    "js": list[str],
    "css": list[str],
    "allFrames": bool,
})

ExtensionGetOutput = TypedDict("ExtensionGetOutput", {
    "id": str,
    "name": str,
    "version": str,
    "description": str | None,
    "sha256": str,
    "bytes": int,
    "permissions": list[str],
    "optionalPermissions": list[str],
    "hostPermissions": list[str],
    "contentScripts": list[ExtensionGetOutputContentScriptsItem],
    "serviceWorker": str | None,
    "trusted": bool,
    "trustDecidedBy": str | None,
    "trustDecidedAt": str | None,
    "trustReason": str | None,
    "createdBy": str,
    "createdAt": str,
})

ExtensionTrustInput = TypedDict("ExtensionTrustInput", {
    "extensionId": str,
    "trusted": bool,
    "reason": NotRequired[str],
})

ExtensionTrustOutputContentScriptsItem = TypedDict("ExtensionTrustOutputContentScriptsItem", {
    "matches": list[str],
    "js": list[str],
    "css": list[str],
    "allFrames": bool,
})

ExtensionTrustOutput = TypedDict("ExtensionTrustOutput", {
    "id": str,
    "name": str,
    "version": str,
    "description": str | None,
    "sha256": str,
    "bytes": int,
    "permissions": list[str],
    "optionalPermissions": list[str],
    "hostPermissions": list[str],
    "contentScripts": list[ExtensionTrustOutputContentScriptsItem],
    "serviceWorker": str | None,
    "trusted": bool,
    "trustDecidedBy": str | None,
    "trustDecidedAt": str | None,
    "trustReason": str | None,
    "createdBy": str,
    "createdAt": str,
})

ExtensionDeleteInput = TypedDict("ExtensionDeleteInput", {
    "extensionId": str,
})

IdentityExtensionsPutInput = TypedDict("IdentityExtensionsPutInput", {
    "identityId": str,
    "extensions": list[str],
})

IdentityExtensionsPutOutput = TypedDict("IdentityExtensionsPutOutput", {
    "identityId": str,
    "extensions": list[str],
})


class Me:
    """Me operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def get(self) -> MeOutput:
        """Who the calling credential is: its org, agent and scopes"""
        return self._call("me", {})


class Keys:
    """Keys operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def create(self, *, name: str, scopes: list[str], agent: str | Unset = UNSET) -> KeyCreateOutput:
        """Mint an API key; a key never gets a scope its minter lacks"""
        return self._call("key_create", {"name": name, "scopes": scopes, "agent": agent})


class Audit:
    """Audit operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def list(self, *, after: int | Unset = UNSET, limit: int | Unset = UNSET, action: str | Unset = UNSET) -> AuditListOutput:
        """The org audit trail, oldest first, paged by id"""
        return self._call("audit_list", {"after": after, "limit": limit, "action": action})


class Identities:
    """Identities operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def assumable(self) -> IdentityListAssumableOutput:
        """List identities the calling agent holds a live assume or manage grant on, with credential slots (no values) and lease state"""
        return self._call("identity_list_assumable", {})

    def create(self, *, name: str, default_open_mode: Literal["exclusive", "fork", "readonly"] | Unset = UNSET) -> IdentityCreateOutput:
        """Create an identity (persona) in the org; names are unique per org"""
        return self._call("identity_create", {"name": name, "defaultOpenMode": default_open_mode})

    def list(self) -> IdentityListOutput:
        """List the org identities with their lease state (never the holder)"""
        return self._call("identity_list", {})

    def delete(self, identity_id: str) -> None:
        """Delete an identity with its credentials and grants; refused (409) while a session holds its lease"""
        return self._call("identity_delete", {"identityId": identity_id})

    def proxy_put(self, identity_id: str, *, url: str, username: str | Unset = UNSET, password: str | Unset = UNSET) -> IdentityProxyPutOutput:
        """Set an identity's default upstream proxy, used by a session bound to it that names no proxy of its own; its host must be on the org allowlist (governance proxyHosts) and its credentials are sealed, never returned"""
        return self._call("identity_proxy_put", {"identityId": identity_id, "url": url, "username": username, "password": password})

    def proxy_delete(self, identity_id: str) -> None:
        """Remove an identity's default upstream proxy and its sealed credentials (sessions already open keep theirs)"""
        return self._call("identity_proxy_delete", {"identityId": identity_id})

    def extensions_put(self, identity_id: str, *, extensions: list[str]) -> IdentityExtensionsPutOutput:
        """Set the extensions a session bound to this identity loads when its start names none — the way an MCP session_start (whose inputs are fixed) loads extensions. An empty list clears it"""
        return self._call("identity_extensions_put", {"identityId": identity_id, "extensions": extensions})


class Credentials:
    """Credentials operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def create(self, identity_id: str, *, name: str, placeholder: str | Unset = UNSET, kind: Literal["password", "totp"] | Unset = UNSET, value: str, origin_allowlist: list[str]) -> CredentialCreateOutput:
        """Add a sealed credential to an identity; the value is write-only and only a mask is returned"""
        return self._call("credential_create", {"identityId": identity_id, "name": name, "placeholder": placeholder, "kind": kind, "value": value, "originAllowlist": origin_allowlist})

    def list(self, identity_id: str) -> CredentialListOutput:
        """List an identity's credentials: names, placeholders, origins and masks only"""
        return self._call("credential_list", {"identityId": identity_id})

    def rotate(self, identity_id: str, credential_id: str, *, value: str) -> CredentialRotateOutput:
        """Replace a credential value (re-sealed); its name, kind and origin allowlist are unchanged"""
        return self._call("credential_rotate", {"identityId": identity_id, "credentialId": credential_id, "value": value})

    def delete(self, identity_id: str, credential_id: str) -> None:
        """Delete a credential from an identity"""
        return self._call("credential_delete", {"identityId": identity_id, "credentialId": credential_id})

    def request(self, *, identity: str, credential_name: str, origin_allowlist: list[str], reason: str) -> CredentialRequestOutput:
        """Ask a person to enter a credential this identity lacks (a password, or an otpauth:// URI for one-time codes), for credential_fill to use. The secret is entered on a console page and never reaches you. A client with URL elicitation is sent the page and the call returns when the credential is saved (or refused, or expired); otherwise the result carries the URL to hand to a person, and credential_list shows the credential once it exists"""
        return self._call("credential_request", {"identity": identity, "credentialName": credential_name, "originAllowlist": origin_allowlist, "reason": reason})


class Grants:
    """Grants operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def create(self, identity_id: str, *, principal_agent_id: str, role: Literal["assume", "manage"], expires_at: str, allowed_origins: list[str], propagation: Literal["none", "same_conversation", "descendants"], max_session_duration_secs: int | None, reason: str, principal_user_id: str | None | Unset = UNSET, principal_org_role: Literal["owner", "admin", "member"] | None | Unset = UNSET) -> GrantCreateOutput:
        """Grant an agent the right to assume or manage an identity until expiresAt"""
        return self._call("grant_create", {"identityId": identity_id, "principalAgentId": principal_agent_id, "role": role, "expiresAt": expires_at, "allowedOrigins": allowed_origins, "propagation": propagation, "maxSessionDurationSecs": max_session_duration_secs, "reason": reason, "principalUserId": principal_user_id, "principalOrgRole": principal_org_role})

    def list(self, identity_id: str) -> GrantListOutput:
        """List who may assume or manage an identity, with each grant state (live, expired, revoked)"""
        return self._call("grant_list", {"identityId": identity_id})

    def revoke(self, identity_id: str, grant_id: str) -> None:
        """Soft-revoke a grant (idempotent): future binds fail; a lease already held is kept until its session ends"""
        return self._call("grant_revoke", {"identityId": identity_id, "grantId": grant_id})

    def delete(self, identity_id: str, grant_id: str) -> None:
        """Hard-delete a grant: removes the row and its audit trail"""
        return self._call("grant_delete", {"identityId": identity_id, "grantId": grant_id})


class Governance:
    """Governance operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def get(self) -> GovernanceGetOutput:
        """Read the org governance flags"""
        return self._call("governance_get", {})

    def put(self, *, credential_freetext_fill: bool | Unset = UNSET, cloak_enabled: bool | Unset = UNSET, declared_advisor_origins: list[str] | Unset = UNSET, record_sessions: bool | Unset = UNSET, video_sessions: bool | Unset = UNSET, video_max_seconds: int | None | Unset = UNSET, video_max_mi_b: int | None | Unset = UNSET, proxy_hosts: list[str] | Unset = UNSET) -> GovernancePutOutput:
        """Update the org governance flags; fields left out keep their value"""
        return self._call("governance_put", {"credential_freetext_fill": credential_freetext_fill, "cloakEnabled": cloak_enabled, "declaredAdvisorOrigins": declared_advisor_origins, "recordSessions": record_sessions, "videoSessions": video_sessions, "videoMaxSeconds": video_max_seconds, "videoMaxMiB": video_max_mi_b, "proxyHosts": proxy_hosts})


class Authstates:
    """Authstates operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def capture(self, session_id: str) -> AuthstateCaptureOutput:
        """Capture a live session's cookies and storage as a new sealed auth-state version of its bound identity (admin action; never automatic)"""
        return self._call("authstate_capture", {"sessionId": session_id})

    def list(self, identity_id: str) -> AuthstateListOutput:
        """List an identity's captured auth-state versions, newest first: id, createdAt, createdBy and the hosts covered"""
        return self._call("authstate_list", {"identityId": identity_id})


class Sessions:
    """Sessions operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def create(self, *, identity: str | Unset = UNSET, egress: Literal["local", "split", "platform"] | Unset = UNSET, network: str | Unset = UNSET, viewport: SessionStartInputViewport | Unset = UNSET, url: str | Unset = UNSET, browser_kind: Literal["chromium", "cloak"] | Unset = UNSET, warm_resume: bool | Unset = UNSET, from_version: str | Unset = UNSET, agent: str | Unset = UNSET, idle_timeout_secs: int | Unset = UNSET, max_duration_secs: int | Unset = UNSET, record: bool | Unset = UNSET, video: bool | SessionStartInputVideoVariant2 | Unset = UNSET, proxy: SessionStartInputProxy | Unset = UNSET, extensions: list[str] | Unset = UNSET, wait_seconds: int | Unset = UNSET) -> SessionStartOutput:
        """Open a browser session, optionally binding a persona; url is recorded but not navigated. Answers live, or pending when the browser is not live within waitSeconds (default 30 s): the start goes on, and session_get with waitSeconds waits for it"""
        return self._call("session_start", {"identity": identity, "egress": egress, "network": network, "viewport": viewport, "url": url, "browserKind": browser_kind, "warmResume": warm_resume, "fromVersion": from_version, "agent": agent, "idleTimeoutSecs": idle_timeout_secs, "maxDurationSecs": max_duration_secs, "record": record, "video": video, "proxy": proxy, "extensions": extensions, "waitSeconds": wait_seconds})

    def spawn(self, *, child_name: str, identity: str | Unset = UNSET, egress: Literal["local", "split", "platform"] | Unset = UNSET, network: str | Unset = UNSET, viewport: SpawnAndStartSessionInputViewport | Unset = UNSET) -> SpawnAndStartSessionOutput:
        """Open a session as a named child of the calling agent (a distinct child principal with a provenance edge)"""
        return self._call("spawn_and_start_session", {"childName": child_name, "identity": identity, "egress": egress, "network": network, "viewport": viewport})

    def get(self, session_id: str, *, wait_seconds: int | Unset = UNSET) -> SessionGetOutput:
        """One session of the caller’s org; with waitSeconds, waits up to that long for a pending session to go live (or fail)"""
        return self._call("session_get", {"sessionId": session_id, "waitSeconds": wait_seconds})

    def list(self, *, status: Literal["pending", "live", "ended", "failed"] | Unset = UNSET, limit: int | Unset = UNSET) -> SessionListOutput:
        """Sessions of the caller’s org, newest first"""
        return self._call("session_list", {"status": status, "limit": limit})

    def end(self, session_id: str) -> SessionEndOutput:
        """End a session and release its persona lease; idempotent"""
        return self._call("session_end", {"sessionId": session_id})

    def journal(self, session_id: str, *, after: int | Unset = UNSET, limit: int | Unset = UNSET) -> SessionJournalOutput:
        """The value-free journal of a session’s operations"""
        return self._call("session_journal", {"sessionId": session_id, "after": after, "limit": limit})

    def cdp(self, session_id: str) -> SessionCdpOutput:
        """Where to connect a CDP client (Playwright connectOverCDP, Puppeteer) to a live session, with this same Bearer credential; not on a session with a bound identity"""
        return self._call("session_cdp", {"sessionId": session_id})

    def request_human(self, session_id: str, *, reason: str) -> RequestHumanOutput:
        """Ask a person for help (a CAPTCHA, a second factor, a judgement call): returns the console URL where someone of the org watches the session live and can take control. While they hold it, driving tools answer 409 human_in_control; session_get shows control: agent again once they hand back. A client with URL elicitation is sent the live view and the call returns once control is handed back"""
        return self._call("request_human", {"sessionId": session_id, "reason": reason})

    def navigate(self, session_id: str, url: str, *, changes: bool | Unset = UNSET) -> NavigateOutput:
        """Navigate the session’s page; returns the resolved url after redirects, and in `changes` the new page: the whole of it with its refs when it is small (a form, a menu), else what it is in a few hundred characters (counts of its links, buttons, fields and headings; its landmarks and top headings with refs). perceive then reads the page without loading it again; perceive with query finds elements by their words"""
        return self._call("navigate", {"sessionId": session_id, "url": url, "changes": changes})

    def perceive(self, session_id: str, *, full: bool | Unset = UNSET, max_chars: int | Unset = UNSET, cursor: str | Unset = UNSET, ref: str | Unset = UNSET, query: str | Unset = UNSET) -> PerceiveOutput:
        """Read the page: url, title, accessibility snapshot, and as text only the visible lines carrying words the snapshot does not already say (usually none: the snapshot holds the page’s words; password values never appear). Every element carries [ref=e12] (inside an iframe [ref=f1e3]): pass the ref to act, hover, select_option, drag, fill_form, file_upload, wait_for or credential_fill instead of a selector; a ref holds until its document navigates. Text the page wrote (names, values, text runs) is always in double quotes with YAML escapes (\\" \\\\ \\n \\xNN), one element a line, and a [ref= inside it is written \\x5bref=: only a [ref=…] outside quotes is a ref. At most maxChars characters (default 12000): the outline of landmarks and headings and what the viewport shows come first; when truncated is true, call again with the cursor given to read on until the whole page has been read, every element once. ref returns the subtree under one element; query returns only the elements whose name or text holds the words, each inside the link, button or other control that holds it (the ref to act on), text with its whole sentence or small paragraph, with the headings and landmarks above them; the heading, term or signature that defines the words comes first with the paragraphs under it (a question such as "what is X" asks for X) — or, when more than ten elements match, the matches alone, each once: the definition, then those holding the words as one phrase, controls first within"""
        return self._call("perceive", {"sessionId": session_id, "full": full, "maxChars": max_chars, "cursor": cursor, "ref": ref, "query": query})

    def act(self, session_id: str, *, verb: Literal["click", "type", "press", "goto", "scroll"], selector: str | Unset = UNSET, ref: str | Unset = UNSET, text: str | Unset = UNSET, key: str | Unset = UNSET, url: str | Unset = UNSET, direction: Literal["up", "down", "left", "right"] | Unset = UNSET, changes: bool | Unset = UNSET) -> ActOutput:
        """One page action: click, type, press, goto or scroll. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one (type and press without either go to the focused element). The answer's changes say what the action changed, with refs"""
        return self._call("act", {"sessionId": session_id, "verb": verb, "selector": selector, "ref": ref, "text": text, "key": key, "url": url, "direction": direction, "changes": changes})

    def fill_credential(self, session_id: str, credential_name: str, selector: str, *, ref: str | Unset = UNSET, changes: bool | Unset = UNSET) -> CredentialFillOutput:
        """Securely type a persona credential into a field; the secret is never returned or shown. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one; a field inside an iframe is judged by the iframe’s own origin"""
        return self._call("credential_fill", {"sessionId": session_id, "credentialName": credential_name, "selector": selector, "ref": ref, "changes": changes})

    def screenshot(self, session_id: str, *, ref: str | Unset = UNSET, selector: str | Unset = UNSET) -> ScreenshotOutput:
        """PNG of the page’s viewport; with ref (from perceive, frames included) or selector, of that one element only (scrolled into view). Filled fields render masked"""
        return self._call("screenshot", {"sessionId": session_id, "ref": ref, "selector": selector})

    def go_back(self, session_id: str, *, changes: bool | Unset = UNSET) -> GoBackOutput:
        """Go back in the page history"""
        return self._call("go_back", {"sessionId": session_id, "changes": changes})

    def reload(self, session_id: str, *, changes: bool | Unset = UNSET) -> ReloadOutput:
        """Reload the page"""
        return self._call("reload", {"sessionId": session_id, "changes": changes})

    def wait_for(self, session_id: str, *, selector: str | Unset = UNSET, ref: str | Unset = UNSET, text: str | Unset = UNSET, timeout_ms: int | Unset = UNSET) -> WaitForOutput:
        """Wait until an element (by ref or selector) or a text appears (exactly one of the three)"""
        return self._call("wait_for", {"sessionId": session_id, "selector": selector, "ref": ref, "text": text, "timeoutMs": timeout_ms})

    def select_option(self, session_id: str, *, selector: str | Unset = UNSET, ref: str | Unset = UNSET, values: list[str], changes: bool | Unset = UNSET) -> SelectOptionOutput:
        """Select options of a <select>. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one"""
        return self._call("select_option", {"sessionId": session_id, "selector": selector, "ref": ref, "values": values, "changes": changes})

    def hover(self, session_id: str, *, selector: str | Unset = UNSET, ref: str | Unset = UNSET, changes: bool | Unset = UNSET) -> HoverOutput:
        """Hover over an element. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one"""
        return self._call("hover", {"sessionId": session_id, "selector": selector, "ref": ref, "changes": changes})

    def pdf(self, session_id: str) -> PdfOutput:
        """PDF of the page. Refused (403 pdf_after_fill) once a credential was filled in this session: a PDF carries page text, where a filled secret could be echoed; use screenshot instead"""
        return self._call("pdf", {"sessionId": session_id})

    def console_messages(self, session_id: str) -> ConsoleMessagesOutput:
        """Console messages the page logged"""
        return self._call("console_messages", {"sessionId": session_id})

    def go_forward(self, session_id: str, *, changes: bool | Unset = UNSET) -> GoForwardOutput:
        """Go forward in the active tab’s history"""
        return self._call("go_forward", {"sessionId": session_id, "changes": changes})

    def tab_list(self, session_id: str) -> TabListOutput:
        """List the session’s tabs (id, url, title, which is active). New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable."""
        return self._call("tab_list", {"sessionId": session_id})

    def tab_open(self, session_id: str, *, url: str | Unset = UNSET) -> TabOpenOutput:
        """Open a new tab, optionally at a url, and make it the active tab. New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable."""
        return self._call("tab_open", {"sessionId": session_id, "url": url})

    def tab_select(self, session_id: str, *, tab_id: str) -> TabSelectOutput:
        """Make a tab the active tab (the one every other tool drives) and bring it to the front. New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable."""
        return self._call("tab_select", {"sessionId": session_id, "tabId": tab_id})

    def tab_close(self, session_id: str, *, tab_id: str | Unset = UNSET) -> TabCloseOutput:
        """Close a tab (default: the active one). The page’s beforeunload handler runs: its dialog is answered like any other (see dialog_handle; by default the page may leave), and a “stay” answer keeps the tab open (closed: false). New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable."""
        return self._call("tab_close", {"sessionId": session_id, "tabId": tab_id})

    def dialog_handle(self, session_id: str, *, action: Literal["accept", "dismiss"], prompt_text: str | Unset = UNSET) -> DialogHandleOutput:
        """Set the answer to the next JavaScript dialog (alert, confirm, prompt, beforeunload) in any tab: accept (with promptText for a prompt) or dismiss. Dialogs never block the page or a tool call: each one is answered the moment it opens, with the armed answer if this tool set one (used once), otherwise by default: alert closed, confirm and prompt dismissed (false / null), beforeunload accepted (the page may leave). So call this BEFORE the action that opens the dialog. Every dialog is reported with how it was answered: in this tool’s result (the latest dialogs) and as a console message of type "dialog" (console_messages)."""
        return self._call("dialog_handle", {"sessionId": session_id, "action": action, "promptText": prompt_text})

    def resize(self, session_id: str, *, width: int, height: int) -> ResizeOutput:
        """Set the viewport size of every tab, open now or later"""
        return self._call("resize", {"sessionId": session_id, "width": width, "height": height})

    def drag(self, session_id: str, *, from_: str | Unset = UNSET, from_ref: str | Unset = UNSET, to: str | Unset = UNSET, to_ref: str | Unset = UNSET, changes: bool | Unset = UNSET) -> DragOutput:
        """Drag one element onto another (press on the first, move, release on the second; HTML5 drag and drop included). Name each by ref (fromRef, toRef: from perceive’s snapshot) or by selector (from, to)"""
        return self._call("drag", {"sessionId": session_id, "from": from_, "fromRef": from_ref, "to": to, "toRef": to_ref, "changes": changes})

    def mouse_click(self, session_id: str, *, x: float, y: float, button: Literal["left", "right", "middle"] | Unset = UNSET, click_count: int | Unset = UNSET, changes: bool | Unset = UNSET) -> MouseClickOutput:
        """Click at viewport coordinates (for agents that read a screenshot): optional button and click count"""
        return self._call("mouse_click", {"sessionId": session_id, "x": x, "y": y, "button": button, "clickCount": click_count, "changes": changes})

    def mouse_move(self, session_id: str, *, x: float, y: float, steps: int | Unset = UNSET) -> MouseMoveOutput:
        """Move the mouse to viewport coordinates (hover effects, pointer tracking)"""
        return self._call("mouse_move", {"sessionId": session_id, "x": x, "y": y, "steps": steps})

    def mouse_wheel(self, session_id: str, *, x: float | Unset = UNSET, y: float | Unset = UNSET, delta_x: float | Unset = UNSET, delta_y: float | Unset = UNSET) -> MouseWheelOutput:
        """Turn the mouse wheel at a point (x and y; without them, where the mouse is): deltaX and deltaY in pixels scroll whatever is under it"""
        return self._call("mouse_wheel", {"sessionId": session_id, "x": x, "y": y, "deltaX": delta_x, "deltaY": delta_y})

    def fill_form(self, session_id: str, *, fields: list[FillFormInputFieldsItem], changes: bool | Unset = UNSET) -> FillFormOutput:
        """Fill several form fields at once (at most 50): text inputs, textareas, checkboxes, radios and selects; every field is checked before any is filled. Each field is named by ref (from perceive’s snapshot) or by selector, exactly one"""
        return self._call("fill_form", {"sessionId": session_id, "fields": fields, "changes": changes})

    def file_put(self, session_id: str, *, name: str, content_base64: str, mime_type: str | Unset = UNSET) -> FilePutOutput:
        """Put a file into the session (content in base64) for file_upload to set into a page’s file input; at most 20 files per session, 10 MiB each. REST only (the body may be up to 15 MiB)"""
        return self._call("file_put", {"sessionId": session_id, "name": name, "contentBase64": content_base64, "mimeType": mime_type})

    def file_upload(self, session_id: str, *, selector: str | Unset = UNSET, ref: str | Unset = UNSET, files: list[str]) -> FileUploadOutput:
        """Set files of the session (put with file_put, or downloaded) into an <input type=file>, by id or name; several need an input with the multiple attribute. The page sees each file’s name, size and type; at most 20 files per session, 10 MiB each. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one"""
        return self._call("file_upload", {"sessionId": session_id, "selector": selector, "ref": ref, "files": files})

    def file_list(self, session_id: str) -> FileListOutput:
        """The session’s files: those put into it and those its pages downloaded (a download over the limits is listed as refused, with its reason); at most 20 files per session, 10 MiB each"""
        return self._call("file_list", {"sessionId": session_id})

    def file_read(self, session_id: str, file_id: str, *, offset: int | Unset = UNSET, length: int | Unset = UNSET) -> FileReadOutput:
        """Read a session file’s bytes (a download exactly as the page received it): at most 5 MiB per call, from offset; eof says whether more follows"""
        return self._call("file_read", {"sessionId": session_id, "fileId": file_id, "offset": offset, "length": length})

    def evaluate(self, session_id: str, *, expression: str, timeout_ms: int | Unset = UNSET) -> EvaluateOutput:
        """Run JavaScript in the page and return its JSON result: an expression, or a function body that returns a value (await allowed). Refused on a session with a bound identity"""
        return self._call("evaluate", {"sessionId": session_id, "expression": expression, "timeoutMs": timeout_ms})

    def recording_get(self, session_id: str) -> SessionRecordingGetOutput:
        """A recorded session’s recording: when, how large, where to download and replay it"""
        return self._call("session_recording_get", {"sessionId": session_id})

    def recording_events(self, session_id: str) -> SessionRecordingEventsOutput:
        """Download a recorded session’s timeline (rrweb events, JSON); a live session’s is read up to now"""
        return self._call("session_recording_events", {"sessionId": session_id})


class Networks:
    """Networks operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def requests(self, session_id: str, *, url_contains: str | Unset = UNSET, method: str | Unset = UNSET, resource_type: str | Unset = UNSET, limit: int | Unset = UNSET) -> NetworkRequestsOutput:
        """The requests the session’s pages made (the newest 500 are kept): method, URL without its query, status, resource type and timing — never a header or a body"""
        return self._call("network_requests", {"sessionId": session_id, "urlContains": url_contains, "method": method, "resourceType": resource_type, "limit": limit})

    def list(self) -> NetworkListOutput:
        """Networks of the org (empty array if none)"""
        return self._call("network_list", {})

    def create(self, *, name: str) -> NetworkCreateOutput:
        """Create a network; its join token secret is returned once"""
        return self._call("network_create", {"name": name})

    def update(self, network_id: str, *, declared_hosts: list[str]) -> NetworkUpdateOutput:
        """Replace the declared hosts (host, IPv4, [IPv6] or ::1, optionally :port); live sessions keep their launch-time list"""
        return self._call("network_update", {"networkId": network_id, "declaredHosts": declared_hosts})

    def rotate_token(self, network_id: str) -> NetworkRotateTokenOutput:
        """Issue a fresh join token; the old one stops working and joined daemons must rejoin"""
        return self._call("network_rotate_token", {"networkId": network_id})

    def delete(self, network_id: str) -> None:
        """Delete a network; its tokens stop working and its daemons are dropped"""
        return self._call("network_delete", {"networkId": network_id})

    def daemons(self, network_id: str) -> NetworkDaemonsOutput:
        """Daemons of a network (reachable true while connected; empty when none is attached)"""
        return self._call("network_daemons", {"networkId": network_id})

    def ensure_local_reach(self, *, target: str, network: str | Unset = UNSET) -> LocalReachEnsureOutput:
        """Make a local target reachable: creates or reuses the backing network and declares the target. Needs networks:write, or a reach grant for the calling agent (an OAuth login never holds networks:write): a grant to a network lets the agent declare targets on that network; a seed grant lets it create its own network once (named by network, default "local")"""
        return self._call("local_reach_ensure", {"target": target, "network": network})

    def reach_grant_create(self, *, agent_id: str, network_id: str | Unset = UNSET) -> NetworkReachGrantCreateOutput:
        """Grant an agent local reach without networks:write: to an existing network (networkId), or, without networkId, the right to create one network of its own with local_reach_ensure"""
        return self._call("network_reach_grant_create", {"agentId": agent_id, "networkId": network_id})

    def reach_grant_list(self, *, agent_id: str | Unset = UNSET) -> NetworkReachGrantListOutput:
        """Reach grants of the org, oldest first, each with its state (live, revoked, ended)"""
        return self._call("network_reach_grant_list", {"agentId": agent_id})

    def reach_grant_revoke(self, grant_id: str) -> None:
        """Revoke a reach grant (idempotent): local_reach_ensure stops working with it; networks, declared hosts and daemons stay as they are"""
        return self._call("network_reach_grant_revoke", {"grantId": grant_id})


class Webhooks:
    """Webhooks operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def create(self, *, url: str, events: list[Literal["session.live", "session.ended", "session.failed", "human.requested", "credential_request.created", "credential_request.answered", "webhook.disabled"]], description: str | Unset = UNSET) -> WebhookCreateOutput:
        """Register a webhook endpoint for some events; its signing secret is returned once"""
        return self._call("webhook_create", {"url": url, "events": events, "description": description})

    def list(self) -> WebhookListOutput:
        """The org’s webhook endpoints, oldest first (never their secrets)"""
        return self._call("webhook_list", {})

    def delete(self, webhook_id: str) -> None:
        """Delete a webhook endpoint: nothing more is sent to it, and its delivery log goes with it"""
        return self._call("webhook_delete", {"webhookId": webhook_id})

    def rotate_secret(self, webhook_id: str, *, overlap_seconds: int | Unset = UNSET) -> WebhookRotateSecretOutput:
        """Issue a new signing secret (returned once). Deliveries from now on, retries included, are signed with it and, for overlapSeconds (a day unless given), with the secret it replaces too, then with it only"""
        return self._call("webhook_rotate_secret", {"webhookId": webhook_id, "overlapSeconds": overlap_seconds})

    def deliveries(self, webhook_id: str, *, before: str | Unset = UNSET, limit: int | Unset = UNSET) -> WebhookDeliveriesOutput:
        """The delivery log of one endpoint, newest first: each event sent, its state and every attempt’s response status"""
        return self._call("webhook_deliveries", {"webhookId": webhook_id, "before": before, "limit": limit})

    def enable(self, webhook_id: str) -> WebhookEnableOutput:
        """Enable an endpoint disabled after failing: its pending deliveries are attempted again, and new events are queued for it"""
        return self._call("webhook_enable", {"webhookId": webhook_id})


class Extensions:
    """Extensions operations."""

    def __init__(self, call: Callable[[str, dict[str, Any]], Any]) -> None:
        self._call = call

    def upload(self, *, zip_base64: str) -> ExtensionUploadOutput:
        """Upload a browser extension: a zip (base64) of an unpacked Manifest V3 extension, manifest.json at its top; at most 4 MiB zipped, 8 MiB unpacked. It starts untrusted"""
        return self._call("extension_upload", {"zipBase64": zip_base64})

    def list(self) -> ExtensionListOutput:
        """The org’s extensions, oldest first, with what each declares and whether it is trusted"""
        return self._call("extension_list", {})

    def get(self, extension_id: str) -> ExtensionGetOutput:
        """One extension of the org: what it declares and whether it is trusted"""
        return self._call("extension_get", {"extensionId": extension_id})

    def trust(self, extension_id: str, *, trusted: bool, reason: str | Unset = UNSET) -> ExtensionTrustOutput:
        """Trust an extension or withdraw trust (org admins; audited). Sealed fills run only in sessions whose every extension is trusted at the moment of the fill"""
        return self._call("extension_trust", {"extensionId": extension_id, "trusted": trusted, "reason": reason})

    def delete(self, extension_id: str) -> None:
        """Delete an extension (org admins; audited). Sessions already running keep it loaded, and a sealed fill there is refused from now on"""
        return self._call("extension_delete", {"extensionId": extension_id})


class Nightjar(Transport):
    """A Nightjar client: Nightjar(base_url, token), then nj.sessions.create(), nj.sessions.navigate(id, url) …"""

    def __init__(self, base_url: str, token: str, *, timeout: float = 60.0) -> None:
        super().__init__(base_url, token, ROUTES, timeout=timeout)
        self.me = Me(self.call)
        self.keys = Keys(self.call)
        self.audit = Audit(self.call)
        self.identities = Identities(self.call)
        self.credentials = Credentials(self.call)
        self.grants = Grants(self.call)
        self.governance = Governance(self.call)
        self.authstates = Authstates(self.call)
        self.sessions = Sessions(self.call)
        self.networks = Networks(self.call)
        self.webhooks = Webhooks(self.call)
        self.extensions = Extensions(self.call)
