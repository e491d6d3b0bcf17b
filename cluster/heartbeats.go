package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Heartbeat coalescing. hashicorp/raft sends every group's heartbeats on their own: with a thousand shard
// replicas a node made tens of thousands of tiny RPCs a second, each with its syscalls and msgpack, and that was
// most of an idle node's CPU. Here every empty AppendEntries (heartbeat or commit refresh) that this node's shard
// groups send to one other node within a short window goes as one frame on one connection (a stream of its own
// on the shared Raft port), and the replies come back batched the same way.
//
// Raft's semantics are kept: on the receiving node each request is handed to its own group exactly as the
// NetworkTransport would (the heartbeat fast path for heartbeats, the group's RPC channel otherwise), each reply
// is that group's own answer, and a call that gets no reply within the transport timeout fails, so raft backs
// off as it does after any failed RPC. Requests that could not be sent (the peer's stream is unavailable: it is
// down, or does not serve the stream) go on the group's own connection instead.

// heartbeatStream is the mux group id of the heartbeat stream; shard ids stay far below it.
const heartbeatStream uint32 = 0xFFFFFFFE

// heartbeatRetryAfter is how long a peer whose heartbeat stream failed gets direct RPCs before the next try.
const heartbeatRetryAfter = 5 * time.Second

// errHeartbeatDirect tells the transport to send the request on the group's own connection.
var errHeartbeatDirect = errors.New("heartbeat stream unavailable")

type heartbeats struct {
	window  time.Duration
	timeout time.Duration
	layer   *groupLayer
	log     *slog.Logger
	metrics *metrics

	seq atomic.Uint64

	mu     sync.Mutex
	groups map[uint32]*coalescingTransport
	peers  map[raft.ServerAddress]*hbPeer
	conns  map[net.Conn]struct{} // accepted streams, closed on shutdown
	closed chan struct{}
}

func newHeartbeats(layer *groupLayer, window, timeout time.Duration, log *slog.Logger, m *metrics) *heartbeats {
	h := &heartbeats{window: window, timeout: timeout, layer: layer, log: log, metrics: m,
		groups: map[uint32]*coalescingTransport{}, peers: map[raft.ServerAddress]*hbPeer{},
		conns: map[net.Conn]struct{}{}, closed: make(chan struct{})}
	go h.accept()
	go h.sweep()
	return h
}

func (h *heartbeats) register(t *coalescingTransport) {
	h.mu.Lock()
	h.groups[t.group] = t
	h.mu.Unlock()
}

// unregister forgets t, unless a newer transport of the same group has taken its place.
func (h *heartbeats) unregister(t *coalescingTransport) {
	h.mu.Lock()
	if h.groups[t.group] == t {
		delete(h.groups, t.group)
	}
	h.mu.Unlock()
}

func (h *heartbeats) group(g uint32) *coalescingTransport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.groups[g]
}

// close stops accepting streams and closes every stream; calls waiting on them fail.
func (h *heartbeats) close() {
	h.mu.Lock()
	select {
	case <-h.closed:
		h.mu.Unlock()
		return
	default:
	}
	close(h.closed)
	peers := h.peers
	for c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.layer.Close()
	for _, p := range peers {
		p.mu.Lock()
		queued := p.queue
		p.queue = nil
		p.mu.Unlock()
		for _, call := range queued {
			call.done <- hbResult{err: raft.ErrTransportShutdown}
		}
		p.closeConn()
	}
}

// sweep fails the calls that have waited for a reply longer than the timeout (the stream may be fine and the
// peer's group just not answering, as a NetworkTransport call would hit its deadline). One pass a second
// costs less than a timer per call.
func (h *heartbeats) sweep() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-h.closed:
			return
		case now := <-tick.C:
			h.mu.Lock()
			peers := make([]*hbPeer, 0, len(h.peers))
			for _, p := range h.peers {
				peers = append(peers, p)
			}
			h.mu.Unlock()
			for _, p := range peers {
				p.mu.Lock()
				conn := p.conn
				p.mu.Unlock()
				if conn != nil {
					conn.expire(now.Add(-h.timeout))
				}
			}
		}
	}
}

// ---- sending ----

// hbCall is one empty AppendEntries waiting for its batch and its reply.
type hbCall struct {
	seq   uint64
	group uint32
	req   []byte // the encoded item: raft may reuse the request once the call returns
	done  chan hbResult
	sent  time.Time
}

type hbResult struct {
	resp raft.AppendEntriesResponse
	err  error // errHeartbeatDirect: never sent
}

// hbPeer is the heartbeat stream to one other node.
type hbPeer struct {
	h    *heartbeats
	addr raft.ServerAddress

	mu        sync.Mutex
	queue     []*hbCall
	flushing  bool // a flush is scheduled
	conn      *hbConn
	downUntil time.Time

	sendMu sync.Mutex // one flush writes at a time
	buf    []byte
}

func (h *heartbeats) peer(addr raft.ServerAddress) *hbPeer {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.peers[addr]
	if p == nil {
		p = &hbPeer{h: h, addr: addr}
		h.peers[addr] = p
	}
	return p
}

// send queues an empty AppendEntries of t's group for target and waits for the group's reply there.
func (h *heartbeats) send(t *coalescingTransport, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	select {
	case <-h.closed:
		return raft.ErrTransportShutdown
	default:
	}
	p := h.peer(target)
	call := &hbCall{seq: h.seq.Add(1), group: t.group, done: make(chan hbResult, 1)}
	call.req = appendHeartbeatRequest(nil, call.seq, t.group, args)
	p.mu.Lock()
	if time.Now().Before(p.downUntil) {
		p.mu.Unlock()
		h.metrics.heartbeatsDirect.Inc()
		return errHeartbeatDirect
	}
	p.queue = append(p.queue, call)
	if !p.flushing {
		p.flushing = true
		time.AfterFunc(h.window, p.flush)
	}
	p.mu.Unlock()

	// A reply, a failure of the stream, the timeout (sweep) or the node's shutdown (close) each end the wait
	// through call.done; the group's own shutdown through abort.
	select {
	case r := <-call.done:
		if r.err == errHeartbeatDirect {
			h.metrics.heartbeatsDirect.Inc()
			return r.err
		}
		// As NetworkTransport: the response is filled in even when the remote returned an error.
		*resp = r.resp
		return r.err
	case <-t.aborted():
		p.forget(call)
		return raft.ErrTransportShutdown
	}
}

// forget drops a call its caller gave up on, so that a late reply finds nobody.
func (p *hbPeer) forget(call *hbCall) {
	p.mu.Lock()
	for i, c := range p.queue {
		if c == call {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			break
		}
	}
	conn := p.conn
	p.mu.Unlock()
	if conn != nil {
		conn.take(call.seq)
	}
}

// flush sends the queued calls as one frame, dialing the peer's stream first if need be.
func (p *hbPeer) flush() {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.mu.Lock()
	calls := p.queue
	p.queue = nil
	p.flushing = false
	conn := p.conn
	p.mu.Unlock()
	if len(calls) == 0 {
		return
	}
	select {
	case <-p.h.closed:
		for _, call := range calls {
			call.done <- hbResult{err: raft.ErrTransportShutdown}
		}
		return
	default:
	}
	if conn == nil {
		c, err := p.h.layer.Dial(p.addr, p.h.timeout)
		if err != nil {
			p.markDown(err)
			for _, call := range calls {
				call.done <- hbResult{err: errHeartbeatDirect}
			}
			return
		}
		conn = &hbConn{peer: p, c: c, pending: map[uint64]*hbCall{}}
		p.mu.Lock()
		p.conn = conn
		p.mu.Unlock()
		go conn.read()
	}
	p.buf = beginFrame(p.buf, len(calls))
	for _, call := range calls {
		p.buf = append(p.buf, call.req...)
	}
	p.buf = endFrame(p.buf)
	conn.add(calls)
	_ = conn.c.SetWriteDeadline(time.Now().Add(p.h.timeout))
	if _, err := conn.c.Write(p.buf); err != nil {
		conn.fail(err)
		return
	}
	p.h.metrics.heartbeatBatches.Inc()
	p.h.metrics.heartbeatsCoalesced.Add(float64(len(calls)))
}

// markDown sends the peer's requests on the groups' own connections for a while.
func (p *hbPeer) markDown(err error) {
	p.mu.Lock()
	was := time.Now().Before(p.downUntil)
	p.downUntil = time.Now().Add(heartbeatRetryAfter)
	p.mu.Unlock()
	if !was {
		p.h.log.Debug("heartbeat stream unavailable: direct heartbeats for a while", "peer", p.addr,
			"retry_after", heartbeatRetryAfter, "err", err)
	}
}

func (p *hbPeer) closeConn() {
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	if conn != nil {
		conn.fail(raft.ErrTransportShutdown)
	}
}

// hbConn is one open heartbeat stream to a peer and the calls sent on it that await replies.
type hbConn struct {
	peer *hbPeer
	c    net.Conn

	mu       sync.Mutex
	pending  map[uint64]*hbCall
	answered bool // a reply came: the peer serves the stream
	failed   bool
}

func (c *hbConn) add(calls []*hbCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		for _, call := range calls {
			call.done <- hbResult{err: errHeartbeatDirect}
		}
		return
	}
	if len(c.pending) == 0 {
		// Time without any reply while calls wait is what makes the stream dead (see read).
		_ = c.c.SetReadDeadline(time.Now().Add(c.peer.h.timeout))
	}
	now := time.Now()
	for _, call := range calls {
		call.sent = now
		c.pending[call.seq] = call
	}
}

// expire fails the calls sent before cutoff.
func (c *hbConn) expire(cutoff time.Time) {
	c.mu.Lock()
	var late []*hbCall
	for seq, call := range c.pending {
		if call.sent.Before(cutoff) {
			late = append(late, call)
			delete(c.pending, seq)
		}
	}
	c.mu.Unlock()
	for _, call := range late {
		call.done <- hbResult{err: fmt.Errorf("heartbeat to %s: no reply within %v", c.peer.addr, c.peer.h.timeout)}
	}
}

func (c *hbConn) take(seq uint64) *hbCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.pending[seq]
	delete(c.pending, seq)
	return call
}

// fail closes the stream; its waiting calls fail (they may have reached the peer, so they are not resent).
func (c *hbConn) fail(err error) {
	c.mu.Lock()
	if c.failed {
		c.mu.Unlock()
		return
	}
	c.failed = true
	pending := c.pending
	c.pending = nil
	answered := c.answered
	c.mu.Unlock()
	c.c.Close()
	p := c.peer
	p.mu.Lock()
	if p.conn == c {
		p.conn = nil
	}
	p.mu.Unlock()
	if !answered {
		// A peer that closes a stream it never answered on is down or does not serve it.
		p.markDown(err)
	}
	for _, call := range pending {
		call.done <- hbResult{err: fmt.Errorf("heartbeat stream to %s: %w", p.addr, err)}
	}
}

// read dispatches the peer's replies to their calls until the stream fails.
func (c *hbConn) read() {
	r := bufio.NewReader(c.c)
	var buf []byte
	for {
		d, count, err := readFrame(r, &buf)
		if err != nil {
			c.fail(err)
			return
		}
		for i := uint32(0); i < count; i++ {
			rep := d.response()
			if d.err != nil {
				c.fail(d.err)
				return
			}
			if call := c.take(rep.seq); call != nil {
				var err error
				if rep.err != "" {
					err = errors.New(rep.err)
				}
				call.done <- hbResult{resp: rep.resp, err: err}
			}
		}
		c.mu.Lock()
		c.answered = true
		if len(c.pending) == 0 {
			_ = c.c.SetReadDeadline(time.Time{})
		} else {
			_ = c.c.SetReadDeadline(time.Now().Add(c.peer.h.timeout))
		}
		c.mu.Unlock()
	}
}

// ---- receiving ----

func (h *heartbeats) accept() {
	for {
		c, err := h.layer.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		select {
		case <-h.closed:
			h.mu.Unlock()
			c.Close()
			return
		default:
		}
		h.conns[c] = struct{}{}
		h.mu.Unlock()
		go h.serve(c)
	}
}

// serve answers one peer's stream: each item goes to its group, and the replies go back in frames of those
// ready within the window.
func (h *heartbeats) serve(c net.Conn) {
	out := make(chan []heartbeatReply, 64)
	done := make(chan struct{})
	defer func() {
		close(done)
		c.Close()
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
	}()
	go h.write(c, out, done)
	r := bufio.NewReader(c)
	var buf []byte
	for {
		d, count, err := readFrame(r, &buf)
		if err != nil {
			return
		}
		items := make([]heartbeatItem, 0, count)
		for i := uint32(0); i < count; i++ {
			it := d.request()
			if d.err != nil {
				h.log.Warn("heartbeat stream: bad frame", "remote", c.RemoteAddr(), "err", d.err)
				return
			}
			items = append(items, it)
		}
		h.metrics.heartbeatsReceived.Add(float64(len(items)))
		go h.answer(items, out, done)
	}
}

// answer hands each item to its group and sends the replies: those ready within the window together, any
// later one (a commit refresh waiting for a busy group) as it comes. A heartbeat that raft answers without
// touching the disk is handled right here; any other request gets a goroutine of its own, so that one group
// writing its term, or busy with its log, holds up no other group's heartbeat.
func (h *heartbeats) answer(items []heartbeatItem, out chan<- []heartbeatReply, done <-chan struct{}) {
	replies := make(chan heartbeatReply, len(items))
	batch := make([]heartbeatReply, 0, len(items))
	left := 0
	for i := range items {
		if rep, ok := h.handleInline(&items[i], replies); ok {
			batch = append(batch, rep)
		} else {
			left++
		}
	}
	for left > 0 || len(batch) > 0 {
		if len(batch) == 0 {
			batch = append(batch, <-replies)
			left--
		}
		if left > 0 {
			timer := time.NewTimer(h.window)
		gather:
			for left > 0 {
				select {
				case rep := <-replies:
					batch = append(batch, rep)
					left--
				case <-timer.C:
					break gather
				}
			}
			timer.Stop()
		}
		select {
		case out <- batch:
		case <-done:
			return
		}
		batch = nil
	}
}

// isHeartbeat is NetworkTransport's test for its heartbeat fast path.
func isHeartbeat(req *raft.AppendEntriesRequest) bool {
	leaderAddr := req.Addr
	if len(leaderAddr) == 0 {
		leaderAddr = req.Leader
	}
	return req.Term != 0 && leaderAddr != nil && req.PrevLogEntry == 0 && req.PrevLogTerm == 0 &&
		len(req.Entries) == 0 && req.LeaderCommitIndex == 0
}

// handleInline answers it at once when that cannot block: no such group, or a heartbeat that raft's fast path
// answers from memory (an older term, or the current term on a follower: anything else makes raft write its
// term first). Otherwise the request goes to handle on a goroutine of its own, whose reply comes on replies.
func (h *heartbeats) handleInline(it *heartbeatItem, replies chan<- heartbeatReply) (heartbeatReply, bool) {
	t := h.group(it.group)
	if t == nil {
		// Like a connection to a group the mux does not know: the sender's call fails and raft backs off.
		return heartbeatReply{seq: it.seq, err: fmt.Sprintf("no raft group %d on this node", it.group)}, true
	}
	r := t.raft.Load()
	fn := t.heartbeatHandler()
	if r == nil || fn == nil || !isHeartbeat(&it.req) ||
		(it.req.Term > r.CurrentTerm() || it.req.Term == r.CurrentTerm() && r.State() != raft.Follower) {
		go h.handle(t, it, replies)
		return heartbeatReply{}, false
	}
	respCh := make(chan raft.RPCResponse, 1)
	fn(raft.RPC{Command: &it.req, RespChan: respCh})
	select {
	case resp := <-respCh:
		return heartbeatReplyOf(it.seq, resp), true
	default:
		// raft ignores RPCs once shut down: wait for the transport to close, as NetworkTransport does.
		go func() { replies <- awaitReply(t, it.seq, respCh) }()
		return heartbeatReply{}, false
	}
}

// handle gives one request to its group as raft's NetworkTransport would and returns the group's answer.
func (h *heartbeats) handle(t *coalescingTransport, it *heartbeatItem, replies chan<- heartbeatReply) {
	respCh := make(chan raft.RPCResponse, 1)
	rpc := raft.RPC{Command: &it.req, RespChan: respCh}
	var fn func(raft.RPC)
	if isHeartbeat(&it.req) {
		fn = t.heartbeatHandler()
	}
	if fn != nil {
		fn(rpc)
	} else {
		select {
		case t.consumer <- rpc:
		case <-t.done:
			replies <- heartbeatReply{seq: it.seq, err: raft.ErrTransportShutdown.Error()}
			return
		}
	}
	replies <- awaitReply(t, it.seq, respCh)
}

func awaitReply(t *coalescingTransport, seq uint64, respCh <-chan raft.RPCResponse) heartbeatReply {
	select {
	case resp := <-respCh:
		return heartbeatReplyOf(seq, resp)
	case <-t.done:
		return heartbeatReply{seq: seq, err: raft.ErrTransportShutdown.Error()}
	}
}

func heartbeatReplyOf(seq uint64, resp raft.RPCResponse) heartbeatReply {
	rep := heartbeatReply{seq: seq}
	if resp.Error != nil {
		rep.err = resp.Error.Error()
	}
	if r, ok := resp.Response.(*raft.AppendEntriesResponse); ok && r != nil {
		rep.resp = *r
	}
	return rep
}

// write sends reply frames, each batch of replies one frame, until the stream ends.
func (h *heartbeats) write(c net.Conn, out <-chan []heartbeatReply, done <-chan struct{}) {
	w := bufio.NewWriter(c)
	var buf []byte
	for {
		var batch []heartbeatReply
		select {
		case batch = <-out:
		case <-done:
			return
		}
		buf = beginFrame(buf, len(batch))
		for i := range batch {
			buf = appendHeartbeatResponse(buf, batch[i].seq, batch[i].err, &batch[i].resp)
		}
		buf = endFrame(buf)
		_ = c.SetWriteDeadline(time.Now().Add(h.timeout))
		if _, err := w.Write(buf); err != nil {
			c.Close()
			return
		}
		if len(out) == 0 {
			if err := w.Flush(); err != nil {
				c.Close()
				return
			}
		}
	}
}
