package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	"github.com/hashicorp/memberlist"

	"github.com/memcluster/memcluster/storage"
)

// gossipMeta is what a node tells its peers about itself through memberlist.
type gossipMeta struct {
	V        int    `json:"v"`
	RaftAddr string `json:"raft"`
	HTTPAddr string `json:"http"`
	Zone     string `json:"zone,omitempty"`
	Records  int    `json:"rec,omitempty"` // NodeInfo.Records
	Commands int    `json:"cmd,omitempty"` // NodeInfo.Commands
}

type gossipDelegate struct {
	meta   []byte
	notify func()
}

func (d *gossipDelegate) NodeMeta(limit int) []byte                  { return d.meta }
func (d *gossipDelegate) NotifyMsg([]byte)                           {}
func (d *gossipDelegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *gossipDelegate) LocalState(join bool) []byte                { return nil }
func (d *gossipDelegate) MergeRemoteState(buf []byte, join bool)     {}

func (d *gossipDelegate) NotifyJoin(*memberlist.Node)   { d.notify() }
func (d *gossipDelegate) NotifyLeave(*memberlist.Node)  { d.notify() }
func (d *gossipDelegate) NotifyUpdate(*memberlist.Node) { d.notify() }

func (n *Node) startGossip() error {
	host, portStr, err := net.SplitHostPort(n.cfg.GossipAddr)
	if err != nil {
		return fmt.Errorf("gossip address: %w", err)
	}
	port, _ := strconv.Atoi(portStr)
	// memberlist advertises an IP: a host name (a container's service name) is resolved once, at start.
	ip, err := gossipIP(host)
	if err != nil {
		return fmt.Errorf("gossip address %s: %w", n.cfg.GossipAddr, err)
	}
	bind := ip
	if n.cfg.BindHost != "" {
		bind = n.cfg.BindHost
	}
	meta, _ := json.Marshal(gossipMeta{V: 1, RaftAddr: n.cfg.RaftAddr, HTTPAddr: n.cfg.HTTPAddr, Zone: n.cfg.Zone,
		Records: int(storage.RecordNewest), Commands: int(storage.CommandNewest)})
	d := &gossipDelegate{meta: meta, notify: n.kick}
	mc := memberlist.DefaultLANConfig()
	if n.cfg.GossipProfile == "local" {
		mc = memberlist.DefaultLocalConfig()
	}
	mc.Name = n.cfg.NodeID
	mc.BindAddr, mc.BindPort = bind, port
	mc.AdvertiseAddr, mc.AdvertisePort = ip, port
	mc.Delegate = d
	mc.Events = d
	mc.Logger = stdlogFor(n.log, "memberlist")
	if len(n.cfg.GossipKey) > 0 {
		mc.SecretKey = n.cfg.GossipKey
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return fmt.Errorf("start gossip on %s: %w", n.cfg.GossipAddr, err)
	}
	n.ml = ml
	return nil
}

// gossipIP is host itself when it is an IP, else its first IPv4 address (else its first address).
func gossipIP(host string) (string, error) {
	if net.ParseIP(host) != nil {
		return host, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return "", err
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip.String(), nil
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("%s: no address", host)
	}
	return ips[0].String(), nil
}

// liveMembers returns the alive gossip members with their advertised addresses.
func (n *Node) liveMembers() map[string]NodeInfo {
	out := map[string]NodeInfo{}
	for _, m := range n.ml.Members() {
		if m.State != memberlist.StateAlive {
			continue
		}
		var gm gossipMeta
		if json.Unmarshal(m.Meta, &gm) != nil || gm.V != 1 {
			continue
		}
		out[m.Name] = NodeInfo{ID: m.Name, RaftAddr: gm.RaftAddr, HTTPAddr: gm.HTTPAddr, GossipAddr: m.Address(), Zone: gm.Zone,
			Records: gm.Records, Commands: gm.Commands}
	}
	return out
}

// memberStates returns every known member's gossip state (alive, suspect, dead, left).
func (n *Node) memberStates() map[string]string {
	out := map[string]string{}
	for _, m := range n.ml.Members() {
		out[m.Name] = gossipStateName(m.State)
	}
	return out
}

func gossipStateName(s memberlist.NodeStateType) string {
	switch s {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateDead:
		return "dead"
	case memberlist.StateLeft:
		return "left"
	}
	return "unknown"
}
