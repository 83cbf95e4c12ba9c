package serve

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/isobuilder"
)

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>sno-iso serve</title>
<style>body{font-family:sans-serif} td,th{padding:2px 12px 2px 0;text-align:left;vertical-align:top} code{font-size:90%}</style>
</head><body>
<h1>sno-iso serve</h1>
<p>{{if .Local}}ISO <code>{{.ISO}}</code>, nodes from <code>{{.NodesDir}}</code>; {{end}}volume id <code>{{.VolumeID}}</code>.
Root file system for minimal ISOs and network boots: <a href="{{.Base}}/rootfs.img">{{.Base}}/rootfs.img</a></p>
{{if .ListErr}}<p><strong>Cannot list the nodes{{if .Local}}: {{.ListErr}}{{else}}; the server's log says why{{end}}</strong></p>{{end}}
<table>
<tr><th>node</th><th>BMC virtual media</th><th>minimal ISO</th><th>iPXE: <code>chain</code> this</th>
<th>kernel, initramfs</th><th>state</th><th>fetched</th><th>progress reported</th></tr>
{{range .Nodes}}{{$name := .Name}}<tr><td>{{.Name}}</td>
{{with .URLs}}<td><a href="{{.ISO}}">{{.ISO}}</a></td>
<td><a href="{{.MinimalISO}}">{{$name}}-minimal.iso</a></td>
<td><a href="{{.BootIPXE}}">{{.BootIPXE}}</a></td>
<td><a href="{{.PXEDir}}/vmlinuz">vmlinuz</a>, <a href="{{.PXEDir}}/initrd.img">initrd.img</a></td>
{{else}}<td colspan="4">shown only on this machine: <code>sno-iso serve urls</code> prints them</td>
{{end}}<td>{{.State}}</td>
<td>{{range .Fetched}}{{.}}<br>{{else}}not yet{{end}}</td>
<td>{{or .Progress "nothing yet"}}</td></tr>
{{else}}<tr><td colspan="8">No node yet: make a directory per node in the nodes directory holding
bootstrap-in-place-for-live-iso.ign and sno.yaml.</td></tr>
{{end}}</table>
{{if .Skipped}}<h2>Not served</h2><ul>{{range .Skipped}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))

type indexNode struct {
	Name, State string
	URLs        *capability.URLs // nil when the client may not see them
	// Fetched says who downloaded the node's ISOs (a BMC's virtual CD), without the token.
	Fetched []string
	// Progress is the furthest phase the node reported, and a failure after it.
	Progress string
}

// serveIndex lists the nodes and their state, with the state of those already prepared:
// listing does not prepare a node. The capability URLs and the server's paths are shown to
// clients on this machine only: the page is open to every client.
func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request, iso *isoState) error {
	base, err := s.baseURL(r)
	if err != nil {
		return err
	}
	l := s.listing()
	local := fromLoopback(r)
	data := struct {
		ISO, VolumeID, NodesDir, Base string
		Local                         bool
		ListErr                       error
		Nodes                         []indexNode
		Skipped                       []string
	}{ISO: iso.path, VolumeID: iso.iso.Volume().VolumeID, NodesDir: s.cfg.NodesDir, Base: base, Local: local,
		ListErr: l.err, Skipped: l.skipped}
	for _, name := range l.nodes {
		state := "not requested yet"
		if ns := s.nodes.get(name); ns != nil && ns.fresh(iso) {
			state = s.nodeStatus(ns)
		}
		n := indexNode{Name: name, State: state, Progress: s.reportSummary(name)}
		if s.secret == nil || local {
			urls := capability.NodeURLs(base, s.publishedSecret(), name)
			n.URLs = &urls
		}
		for _, iso := range []string{"/" + name + ".iso", "/" + name + capability.MinimalSuffix + ".iso"} {
			if f := s.fetches.describe(iso); f != "" {
				n.Fetched = append(n.Fetched, f)
			}
		}
		data.Nodes = append(data.Nodes, n)
	}
	var page bytes.Buffer
	if err := indexPage.Execute(&page, data); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(page.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = w.Write(page.Bytes())
	return err
}

// nodeStatus is what the index says of a prepared node: ready only when every file it lists
// for the node can be served, else which cannot and why, in words fit for any client.
func (s *Server) nodeStatus(ns *nodeState) string {
	if ns.err != nil {
		return "broken: " + problemClass(ns.err)
	}
	var problems []string
	var tooLarge *isobuilder.TooLargeError
	if err := ns.fitsISO(); err != nil && !(s.cfg.GrowEmbedArea && errors.As(err, &tooLarge)) {
		problems = append(problems, "ISOs: "+problemClass(err))
	}
	if ns.node.Output.RootfsURL == "" && s.cfg.BaseURL == "" {
		problems = append(problems, "minimal ISO: the server does not know the URL of the root file system")
	}
	if _, err := ns.initramfs(); err != nil {
		problems = append(problems, "initrd.img: "+problemClass(err))
	}
	if len(problems) == 0 {
		return "ready"
	}
	return "not ready: " + strings.Join(problems, "; ")
}
