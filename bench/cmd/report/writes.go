package main

import (
	"fmt"
	"image/color"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var clientsRe = regexp.MustCompile(`^memcluster-c(\d+)-r\d+\.json$`)

// writeClients lists the client counts the write runs in dir measured, ascending (1, 16, 64 by default;
// bench/run.sh's WRITE_CLIENTS adds more).
func writeClients(dir string) []int {
	files, _ := filepath.Glob(filepath.Join(dir, "memcluster-c*-r*.json"))
	var cs []int
	for _, fn := range files {
		if m := clientsRe.FindStringSubmatch(filepath.Base(fn)); m != nil {
			if c, err := strconv.Atoi(m[1]); err == nil && !slices.Contains(cs, c) {
				cs = append(cs, c)
			}
		}
	}
	slices.Sort(cs)
	return cs
}

// drawWritePlot draws memcluster beside etcd against the number of clients: acknowledged puts per second
// (left) and their p50 and p99 (right, p99 dashed), medians of the repetitions; x logarithmic.
func drawWritePlot(path string, clients []int) error {
	type side struct {
		label string
		col   color.Color
		shape draw.GlyphDrawer
		ops   plotter.XYs
		p50   plotter.XYs
		p99   plotter.XYs
	}
	sides := []*side{
		{label: "memcluster", col: color.RGBA{44, 160, 44, 255}, shape: draw.TriangleGlyph{}},
		{label: "etcd", col: color.RGBA{31, 119, 180, 255}, shape: draw.CircleGlyph{}},
	}
	for _, c := range clients {
		for _, s := range sides {
			ws, _ := readWrites(fmt.Sprintf("%s-c%d", s.label, c))
			if len(ws) == 0 {
				continue
			}
			ops, p50, p99 := summary(ws)
			x := float64(c)
			s.ops = append(s.ops, plotter.XY{X: x, Y: ops})
			s.p50 = append(s.p50, plotter.XY{X: x, Y: p50})
			s.p99 = append(s.p99, plotter.XY{X: x, Y: p99})
		}
	}
	ticks := make([]plot.Tick, len(clients))
	for i, c := range clients {
		ticks[i] = plot.Tick{Value: float64(c), Label: strconv.Itoa(c)}
	}
	newPanel := func(title, ylabel string, logY bool) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "concurrent clients"
		p.Y.Label.Text = ylabel
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		if logY {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		p.Legend.Top, p.Legend.Left = true, true
		p.Add(plotter.NewGrid())
		return p
	}
	line := func(p *plot.Plot, s *side, xys plotter.XYs, dashed bool, legend string) error {
		if len(xys) == 0 {
			return nil
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = s.col, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = s.col, s.shape, vg.Points(3)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l, pts)
		if legend != "" {
			p.Legend.Add(legend, l, pts)
		}
		return nil
	}
	thr := newPanel("3-replica acknowledged puts", "puts per second", false)
	lat := newPanel("Their latency (p50 solid, p99 dashed)", "ms", true)
	for _, s := range sides {
		if err := line(thr, s, s.ops, false, s.label); err != nil {
			return err
		}
		if err := line(lat, s, s.p50, false, s.label+" p50"); err != nil {
			return err
		}
		if err := line(lat, s, s.p99, true, s.label+" p99"); err != nil {
			return err
		}
	}
	if len(clients) > 0 {
		lo, hi := float64(clients[0])/1.5, float64(clients[len(clients)-1])*1.5
		thr.X.Min, thr.X.Max, lat.X.Min, lat.X.Max = lo, hi, lo, hi
	}
	thr.Y.Min = 0
	img := vgimg.New(vg.Points(960), vg.Points(400))
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(20), PadTop: vg.Points(8), PadBottom: vg.Points(8),
		PadLeft: vg.Points(8), PadRight: vg.Points(12)}
	cs := plot.Align([][]*plot.Plot{{thr, lat}}, tiles, draw.New(img))
	thr.Draw(cs[0][0])
	lat.Draw(cs[0][1])
	return savePNG(path, img)
}
