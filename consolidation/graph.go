package consolidation

import (
	"fmt"
	"sort"
)

// Graph is a read-only view of current facts: entities (subjects and objects) are nodes,
// facts are edges. It is rebuilt from facts on demand; nothing is stored.
type Graph struct {
	labels map[string]string // node key → label as first seen
	adj    map[string][]Edge // node key → edges touching it, in traversal order
}

// Edge is one current fact between two nodes (node keys, see Node).
type Edge struct {
	FactID     string  `json:"fact_id"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	Predicate  string  `json:"predicate"`
	Confidence float64 `json:"confidence"`
}

// Node is an entity. Key is the case- and article-insensitive form used for matching.
type Node struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Hops  int    `json:"hops"` // distance from the nearest seed
}

// Subgraph is the bounded result of a traversal.
type Subgraph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// BuildGraph builds the graph of the current facts.
func BuildGraph(facts []Fact) *Graph {
	g := &Graph{labels: map[string]string{}, adj: map[string][]Edge{}}
	for _, f := range CurrentFacts(facts) {
		from, to := g.node(f.Subject), g.node(f.Object)
		if from == "" || to == "" {
			continue
		}
		e := Edge{FactID: f.ID, From: from, To: to, Predicate: f.Predicate, Confidence: f.Confidence}
		g.adj[from] = append(g.adj[from], e)
		if to != from {
			g.adj[to] = append(g.adj[to], e)
		}
	}
	// Strongest edges first, so a traversal that hits maxNodes keeps the most confident facts.
	for _, es := range g.adj {
		sort.Slice(es, func(i, j int) bool {
			if es[i].Confidence != es[j].Confidence {
				return es[i].Confidence > es[j].Confidence
			}
			return es[i].FactID < es[j].FactID
		})
	}
	return g
}

func (g *Graph) node(label string) string {
	k := objectKey(label)
	if _, ok := g.labels[k]; !ok && k != "" {
		g.labels[k] = label
	}
	return k
}

// Traverse walks breadth-first from the seeds (labels, matched like objects) for at most
// maxHops hops, keeping at most maxNodes nodes; the result holds every edge between kept
// nodes. Unknown seeds are ignored. maxHops 0 returns the seeds and the edges among them.
func (g *Graph) Traverse(seeds []string, maxHops, maxNodes int) (Subgraph, error) {
	if maxHops < 0 || maxNodes < 1 {
		return Subgraph{}, fmt.Errorf("%w: traverse: max hops %d must be ≥ 0 and max nodes %d ≥ 1", ErrInvalidInput, maxHops, maxNodes)
	}
	hops := map[string]int{}
	var order, frontier []string
	for _, s := range seeds {
		k := objectKey(s)
		if _, known := g.labels[k]; known && len(order) < maxNodes {
			if _, seen := hops[k]; !seen {
				hops[k] = 0
				order = append(order, k)
				frontier = append(frontier, k)
			}
		}
	}
	for h := 1; h <= maxHops && len(frontier) > 0 && len(order) < maxNodes; h++ {
		var next []string
		for _, n := range frontier {
			for _, e := range g.adj[n] {
				other := e.To
				if other == n {
					other = e.From
				}
				if _, seen := hops[other]; seen || len(order) >= maxNodes {
					continue
				}
				hops[other] = h
				order = append(order, other)
				next = append(next, other)
			}
		}
		frontier = next
	}
	return g.subgraph(order, hops), nil
}

func (g *Graph) subgraph(order []string, hops map[string]int) Subgraph {
	var sg Subgraph
	seen := map[string]bool{}
	for _, k := range order {
		sg.Nodes = append(sg.Nodes, Node{Key: k, Label: g.labels[k], Hops: hops[k]})
		for _, e := range g.adj[k] {
			_, inFrom := hops[e.From]
			_, inTo := hops[e.To]
			if inFrom && inTo && !seen[e.FactID] {
				seen[e.FactID] = true
				sg.Edges = append(sg.Edges, e)
			}
		}
	}
	sort.Slice(sg.Edges, func(i, j int) bool { return sg.Edges[i].FactID < sg.Edges[j].FactID })
	return sg
}
