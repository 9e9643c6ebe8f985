"""One SIP call as the server sees it: the dialog (RFC 3261 section 12) and its media."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from .media import RtpSession
from .message import SipMessage, new_branch, new_tag, parse_uri, tag_of, uri_of
from .sdp import AudioPlan, LocalDescription, SessionDescription


@dataclass
class SipCall:
    """A call from INVITE to BYE. ``context`` is the call handler's own state."""

    call_id: str
    invite: SipMessage
    source: tuple[str, int]
    user: str | None  # Request-URI user part: the line that was dialled
    host: str  # Request-URI host
    to_user: str | None
    local_tag: str = field(default_factory=new_tag)
    remote_tag: str | None = None
    remote_target: str = ""  # the caller's Contact URI
    route_set: list[str] = field(default_factory=list)
    local_cseq: int = 0
    remote_cseq: int = 0
    state: str = "early"  # early -> confirmed -> terminated
    end_reason: str | None = None
    media: RtpSession | None = None
    local_sdp: LocalDescription | None = None
    offer: SessionDescription | None = None  # None: late offer, the answer comes in the ACK
    plan: AudioPlan | None = None
    hangup: asyncio.Event = field(default_factory=asyncio.Event)
    info_dtmf: list[str] = field(default_factory=list)
    context: Any = None
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def from_invite(cls, invite: SipMessage, source: tuple[str, int]) -> SipCall:
        ruri = parse_uri(invite.uri or "")
        to_uri = uri_of(invite.get("To") or "")
        try:
            to_user = parse_uri(to_uri).user
        except ValueError:
            to_user = None
        contact = invite.get_all("Contact")
        call = cls(
            call_id=invite.call_id,
            invite=invite,
            source=source,
            user=ruri.user,
            host=ruri.host,
            to_user=to_user,
            remote_tag=invite.from_tag,
            remote_target=uri_of(contact[0]) if contact else uri_of(invite.get("From") or ""),
            route_set=invite.get_all("Record-Route"),
            remote_cseq=invite.cseq[0],
        )
        return call

    @property
    def local_uri(self) -> str:
        """Our From header in requests we send (the INVITE's To, with our tag)."""
        to = self.invite.get("To") or ""
        return to if tag_of(to) else f"{to};tag={self.local_tag}"

    @property
    def remote_uri(self) -> str:
        return self.invite.get("From") or ""

    def matches(self, msg: SipMessage) -> bool:
        """An in-dialog request: the caller's tag in From, ours in To."""
        return msg.from_tag == self.remote_tag and msg.to_tag == self.local_tag

    def next_cseq(self) -> int:
        self.local_cseq += 1
        return self.local_cseq

    def next_hop(self) -> tuple[str, int]:
        """Where in-dialog requests go: the first Record-Route (loose routing), else the
        caller's Contact."""
        target = uri_of(self.route_set[0]) if self.route_set else self.remote_target
        uri = parse_uri(target)
        return uri.host.strip("[]"), uri.port or 5060

    def bye(self, via: str, user_agent: str) -> tuple[SipMessage, str]:
        """Our BYE (RFC 3261 15.1.1) and its branch; ``via`` is our ``host:port``."""
        branch = new_branch()
        req = SipMessage(method="BYE", uri=self.remote_target)
        req.add("Via", f"SIP/2.0/UDP {via};branch={branch};rport")
        req.add("Max-Forwards", "70")
        req.add("From", self.local_uri)
        req.add("To", self.remote_uri)
        req.add("Call-ID", self.call_id)
        req.add("CSeq", f"{self.next_cseq()} BYE")
        for route in self.route_set:
            req.add("Route", route)
        req.add("User-Agent", user_agent)
        if self.end_reason:
            req.add("Reason", f'SIP;cause=200;text="{self.end_reason}"')
        return req, branch
