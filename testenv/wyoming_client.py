"""The reference Wyoming library (PyPI wyoming) as a client, the way Home Assistant's Wyoming
conversation agent uses it: python wyoming_client.py URI SCENARIO [ARGS]

  describe                           sends describe; prints the info's handle programs, as the
                                     library reads them back (Info.from_event)
  transcript TEXT LANGUAGE CONV_ID   sends a transcript with context {"conversation_id": CONV_ID};
                                     prints the events up to handled or not-handled (what Home
                                     Assistant's agent reads up to; a streamed answer's
                                     handled-start, -chunk and -stop come before)
  garbage                            sends a line that is not JSON; prints what comes back

Prints one JSON value on stdout. Exits 2 when the service closes before the answer.
"""

import asyncio
import json
import sys

from wyoming.asr import Transcript
from wyoming.client import AsyncClient
from wyoming.handle import Handled, HandledChunk, HandledStart, HandledStop, NotHandled
from wyoming.info import Describe, Info


async def main():
    uri, scenario, *args = sys.argv[1:]
    async with AsyncClient.from_uri(uri) as client:
        if scenario == "describe":
            await client.write_event(Describe().event())
            while True:
                event = await client.read_event()
                if event is None:
                    sys.exit(2)
                if Info.is_type(event.type):
                    info = Info.from_event(event)
                    print(json.dumps([p.to_dict() for p in info.handle], ensure_ascii=False))
                    return
        if scenario == "transcript":
            text, language, conversation_id = args
            await client.write_event(
                Transcript(
                    text=text, language=language, context={"conversation_id": conversation_id}
                ).event()
            )
            events = []
            while True:
                event = await client.read_event()
                if event is None:
                    sys.exit(2)
                # Each event as the library reads it back.
                for t in (HandledStart, HandledChunk, HandledStop):
                    if t.is_type(event.type):
                        t.from_event(event)
                events.append({"type": event.type, "data": event.data})
                if any(t.is_type(event.type) for t in (Handled, NotHandled)):
                    print(json.dumps(events, ensure_ascii=False))
                    return
        if scenario == "garbage":
            client._writer.write(b"this is not JSON\n")
            await client._writer.drain()
            event = await client.read_event()
            print(json.dumps(None if event is None else {"type": event.type, "data": event.data}))
            return
        raise SystemExit(f"unknown scenario {scenario!r}")


asyncio.run(main())
