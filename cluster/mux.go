package cluster

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Every Raft group of a node shares one TCP port. A dialer opens each connection with an 8-byte header,
// "MCR" + version(1) + group id (u32), and the mux hands the connection to that group's stream layer.
const muxVersion = 1

var muxMagic = []byte("MCR")

// MetaGroup is the group id of the meta Raft group; shards use 0..N-1.
const MetaGroup uint32 = 0xFFFFFFFF

type mux struct {
	ln        net.Listener
	advertise net.Addr
	log       *slog.Logger
	tls       *tls.Config // nil: plain TCP

	mu     sync.Mutex
	groups map[uint32]*groupLayer
	closed bool
}

func newMux(ln net.Listener, advertise string, tlsConf *tls.Config, log *slog.Logger) (*mux, error) {
	addr, err := net.ResolveTCPAddr("tcp", advertise)
	if err != nil {
		return nil, fmt.Errorf("raft advertise address %q: %w", advertise, err)
	}
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	m := &mux{ln: ln, advertise: addr, log: log, tls: tlsConf, groups: map[uint32]*groupLayer{}}
	go m.serve()
	return m, nil
}

func (m *mux) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			m.mu.Lock()
			closed := m.closed
			m.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			m.log.Warn("raft accept", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		go m.route(c)
	}
}

func (m *mux) route(c net.Conn) {
	var hdr [8]byte
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, hdr[:]); err != nil || string(hdr[:3]) != string(muxMagic) || hdr[3] != muxVersion {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	g := binary.BigEndian.Uint32(hdr[4:])
	m.mu.Lock()
	layer := m.groups[g]
	m.mu.Unlock()
	if layer == nil || !layer.deliver(c) {
		c.Close()
	}
}

// layer registers (or returns) the stream layer of group g.
func (m *mux) layer(g uint32) *groupLayer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.groups[g]; ok && !l.isClosed() {
		return l
	}
	l := &groupLayer{mux: m, group: g, conns: make(chan net.Conn, 16), done: make(chan struct{})}
	m.groups[g] = l
	return l
}

func (m *mux) close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return m.ln.Close()
}

// groupLayer is one group's raft.StreamLayer over the shared listener.
type groupLayer struct {
	mux   *mux
	group uint32
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

var _ raft.StreamLayer = (*groupLayer)(nil)

func (l *groupLayer) deliver(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	case <-time.After(5 * time.Second):
		return false
	}
}

func (l *groupLayer) isClosed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// Accept implements net.Listener.
func (l *groupLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; it unregisters the group, not the shared port.
func (l *groupLayer) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.mux.mu.Lock()
		if l.mux.groups[l.group] == l {
			delete(l.mux.groups, l.group)
		}
		l.mux.mu.Unlock()
	})
	return nil
}

// Addr implements net.Listener: the advertised address, which raft gives peers.
func (l *groupLayer) Addr() net.Addr { return l.mux.advertise }

// Dial implements raft.StreamLayer.
func (l *groupLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	var err error
	if l.mux.tls != nil {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(addr), l.mux.tls)
	} else {
		c, err = net.DialTimeout("tcp", string(addr), timeout)
	}
	if err != nil {
		return nil, err
	}
	var hdr [8]byte
	copy(hdr[:], muxMagic)
	hdr[3] = muxVersion
	binary.BigEndian.PutUint32(hdr[4:], l.group)
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(hdr[:]); err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetWriteDeadline(time.Time{})
	return c, nil
}
