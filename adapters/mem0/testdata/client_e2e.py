"""Drives mem0's own MemoryClient against a memcluster node's /mem0 adapter.

Usage: client_e2e.py HOST TOKEN OTHER_TOKEN; prints one line per step, exits 1 on the first failure.
"""
import sys

from mem0.client.main import MemoryClient

host, token, other = sys.argv[1:4]


def check(cond, what):
    if not cond:
        print("FAIL", what)
        sys.exit(1)
    print("ok", what)


client = MemoryClient(api_key=token, host=host)
check(True, "construct (ping)")

added = client.add([{"role": "user", "content": "I prefer morning flights to Lisbon"}], user_id="alice", infer=False)
check(added.get("status") == "SUCCEEDED" and len(added.get("results", [])) == 1, "add infer=false: %r" % added)
mid = added["results"][0]["id"]

inferred = client.add([{"role": "user", "content": "I live in Berlin. I love hiking."}], user_id="alice")
events = {r["event"] for r in inferred.get("results", [])}
check("ADD" in events, "add infer=true: facts %r" % [r["memory"] for r in inferred["results"]])

found = client.search("morning flights", filters={"user_id": "alice"})
hits = found.get("results", [])
check(hits and hits[0]["id"] == mid and hits[0]["score"] > 0, "search with filters: %r" % hits[:1])

everything = client.get_all(filters={"user_id": "alice"})
check(everything["count"] >= 3 and any(m["id"] == mid for m in everything["results"]), "get_all: count %d" % everything["count"])

one = client.get(mid)
check(one["memory"] == "I prefer morning flights to Lisbon" and one["user_id"] == "alice", "get")

updated = client.update(mid, text="I prefer evening flights to Lisbon")
check(updated["memory"] == "I prefer evening flights to Lisbon", "update")
mid = updated["id"]

hist = client.history(mid)
check(hist and hist[-1]["new_memory"] == "I prefer evening flights to Lisbon", "history: %r" % [h["event"] for h in hist])

intruder = MemoryClient(api_key=other, host=host)
try:
    intruder.search("flights", filters={"user_id": "alice"})
    check(False, "another user's token is refused")
except Exception as e:  # the client raises its own exception classes by status
    check("403" in str(e) or "may not access" in str(e), "another user's token is refused: %s" % type(e).__name__)

deleted = client.delete(mid)
check("deleted" in deleted.get("message", "").lower(), "delete")
try:
    client.get(mid)
    check(False, "get after delete")
except Exception as e:
    check("not found" in str(e).lower(), "get after delete: %s" % type(e).__name__)
print("PASS")
