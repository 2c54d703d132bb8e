"""Underhall spread over processes: gateways and workers on NATS (issue 14).

``underhall serve`` does not use this package. A cluster is:

- **workers** (:mod:`server.cluster.worker`), each running the world's tick
  for the dungeon levels it holds a lease on (:mod:`server.cluster.lease`),
  saving characters in PostgreSQL under an epoch that fences stale writers
  out (:mod:`server.cluster.fence`);
- **gateways** (:mod:`server.cluster.gateway`), holding the players'
  websockets, speaking the unchanged client protocol, and routing each
  player's messages to the worker that holds its character;
- NATS subjects and JetStream key-value buckets between them, named in
  :mod:`server.cluster.bus`.

The simulation (``server/sim``) knows nothing of any of it. docs/cluster.md
describes the design, the hand-off on the stairs and the failure cases.
"""
