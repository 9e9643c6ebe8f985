"""A compact SIP user agent server (UDP, G.711, RFC 4733) bridged into the voice pipeline.

    server.py     SipServer: transactions and dialogs (INVITE/ACK/BYE/CANCEL/OPTIONS/INFO)
    dialog.py     SipCall: one call's dialog state and media
    message.py    SIP message parsing and building
    sdp.py        SDP offer/answer for one audio stream
    rtp.py        RTP packets, G.711 codecs, telephone events
    media.py      RtpSession: a call's RTP socket, 20 ms sender clock
    transport.py  RtpTransport: a pipecat transport over an RtpSession
    bridge.py     VoiceCallHandler: called user -> owner's line -> VoiceCall

Exceptions: ``message.SipParseError`` (a request that earns a 4xx/5xx answer),
``sdp.SdpError`` (an offer we cannot answer: 488), ``rtp.RtpError`` (a packet dropped).
"""

from .dialog import SipCall
from .server import CallHandler, SipConfig, SipServer

__all__ = ["CallHandler", "SipCall", "SipConfig", "SipServer"]
