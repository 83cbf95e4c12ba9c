package redfish

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
)

// System is what the client reads of a ComputerSystem.
type System struct {
	Path       string      `json:"@odata.id"`
	ID         string      `json:"Id"`
	Name       string      `json:"Name"`
	UUID       string      `json:"UUID"`
	PowerState string      `json:"PowerState"`
	Boot       BootState   `json:"Boot"`
	Media      odataID     `json:"VirtualMedia"`
	Links      systemLinks `json:"Links"`
	Actions    struct {
		Reset *resetAction `json:"#ComputerSystem.Reset"`
	} `json:"Actions"`
	Settings *struct {
		SettingsObject odataID `json:"SettingsObject"`
	} `json:"@Redfish.Settings"`
}

type systemLinks struct {
	ManagedBy []odataID `json:"ManagedBy"`
}

// BootState is the System's boot override.
type BootState struct {
	Target         string   `json:"BootSourceOverrideTarget"`
	Enabled        string   `json:"BootSourceOverrideEnabled"`
	Mode           string   `json:"BootSourceOverrideMode,omitempty"`
	AllowedTargets []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues,omitempty"`
}

type resetAction struct {
	Target     string   `json:"target"`
	Allowed    []string `json:"ResetType@Redfish.AllowableValues"`
	ActionInfo string   `json:"@Redfish.ActionInfo"`
}

// actionInfo is the ActionInfo resource that lists an action's allowed parameter values.
type actionInfo struct {
	Parameters []struct {
		Name            string   `json:"Name"`
		AllowableValues []string `json:"AllowableValues"`
	} `json:"Parameters"`
}

type collection struct {
	Members []odataID `json:"Members"`
}

// findSystem returns the System the address or want names (a path, or a member's last path
// segment, Id, Name or UUID), or the only one. Unknown names list what exists.
func (c *Client) findSystem(ctx context.Context, want string) (*System, error) {
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	target := c.addr.SystemPath
	if want != "" {
		target = want
	}
	if strings.HasPrefix(target, "/") {
		var sys System
		err := c.get(ctx, strings.TrimRight(target, "/"), &sys)
		var refusal *Error
		if errors.As(err, &refusal) && refusal.StatusCode == http.StatusNotFound {
			return nil, c.systemNotFound(ctx, target)
		}
		if err != nil {
			return nil, err
		}
		return c.systemRead(&sys, strings.TrimRight(target, "/")), nil
	}
	members, err := c.systemPaths(ctx)
	if err != nil {
		return nil, err
	}
	var chosen string
	switch {
	case target != "":
		for _, m := range members {
			if path.Base(m) == target {
				chosen = m
			}
		}
		if chosen == "" {
			return c.systemByName(ctx, target, members)
		}
	case len(members) == 1:
		chosen = members[0]
	case len(members) == 0:
		return nil, &NotFoundError{Kind: KindSystem, Name: "(any)"}
	default:
		return nil, &AmbiguousSystemError{Available: members}
	}
	var sys System
	if err := c.get(ctx, chosen, &sys); err != nil {
		return nil, err
	}
	return c.systemRead(&sys, chosen), nil
}

// maxSystemsRead bounds the Systems read to find one by Id, Name or UUID.
const maxSystemsRead = 64

// systemByName reads the members until one has want as its Id, Name or UUID (UUIDs in any
// case).
func (c *Client) systemByName(ctx context.Context, want string, members []string) (*System, error) {
	for i, m := range members {
		if i == maxSystemsRead {
			break
		}
		var sys System
		if err := c.get(ctx, m, &sys); err != nil {
			return nil, err
		}
		if sys.ID == want || sys.Name == want || (sys.UUID != "" && strings.EqualFold(sys.UUID, want)) {
			return c.systemRead(&sys, m), nil
		}
	}
	return nil, &NotFoundError{Kind: KindSystem, Name: want, Available: members}
}

// systemRead fills what a mockup may omit and reports the find.
func (c *Client) systemRead(sys *System, at string) *System {
	if sys.Path == "" {
		sys.Path = at
	}
	sys.Path = strings.TrimRight(sys.Path, "/")
	if sys.ID == "" {
		sys.ID = path.Base(sys.Path)
	}
	c.progress(StepSystem, "found system %s (power %s)", sys.Path, orUnknown(sys.PowerState))
	return sys
}

func (c *Client) systemPaths(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	systems := c.root.Systems.ID
	c.mu.Unlock()
	var col collection
	if err := c.get(ctx, systems, &col); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(col.Members))
	for _, m := range col.Members {
		if m.ID != "" {
			paths = append(paths, strings.TrimRight(m.ID, "/"))
		}
	}
	return paths, nil
}

func (c *Client) systemNotFound(ctx context.Context, name string) error {
	members, err := c.systemPaths(ctx)
	if err != nil {
		return err
	}
	return &NotFoundError{Kind: KindSystem, Name: name, Available: members}
}

// refresh reads the System again.
func (c *Client) refresh(ctx context.Context, sys *System) error {
	var fresh System
	if err := c.get(ctx, sys.Path, &fresh); err != nil {
		return err
	}
	fresh.Path, fresh.ID = sys.Path, sys.ID
	*sys = fresh
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
