package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// serviceRoot is what the client reads of /redfish/v1.
type serviceRoot struct {
	Systems        odataID `json:"Systems"`
	SessionService odataID `json:"SessionService"`
	Links          struct {
		Sessions odataID `json:"Sessions"`
	} `json:"Links"`
}

// odataID is a link to another resource.
type odataID struct {
	ID string `json:"@odata.id"`
}

const serviceRootPath = "/redfish/v1/"

// connect reads the service root and authenticates, once: with a session when the BMC has
// a SessionService that accepts the credentials, else with Basic auth.
func (c *Client) connect(ctx context.Context) error {
	c.mu.Lock()
	done := c.root != nil
	c.mu.Unlock()
	if done {
		return nil
	}
	root, err := c.readRoot(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.root = root
	c.mu.Unlock()
	if c.opts.Credentials != (Credentials{}) && strings.HasPrefix(c.endpoint, "http://") {
		c.progress(StepWarning, "the BMC account goes to %s unencrypted (plain http): anyone on the network path can read it", c.endpoint)
	}
	if root.Links.Sessions.ID == "" {
		c.useBasic()
		return nil
	}
	err = c.login(ctx)
	var refusal *Error
	if errors.As(err, &refusal) && refusal.StatusCode != http.StatusUnauthorized {
		// A SessionService that refuses logins for another reason: Basic may still work.
		c.progress(StepAuth, "the BMC refused a session (%d): using Basic authentication", refusal.StatusCode)
		c.useBasic()
		return nil
	}
	return err
}

// readRoot reads the service root, unauthenticated as Redfish allows, or with Basic auth
// for BMCs that protect it.
func (c *Client) readRoot(ctx context.Context) (*serviceRoot, error) {
	r := request{method: http.MethodGet, path: serviceRootPath}
	resp, err := c.doRetrying(ctx, r)
	if err == nil && resp.status == http.StatusUnauthorized {
		c.useBasic()
		resp, err = c.doRetrying(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	if resp, err = c.check(r.method, r.path, resp); err != nil {
		return nil, err
	}
	var root serviceRoot
	if err := c.decodeResource(r.path, resp, &root); err != nil {
		return nil, err
	}
	if root.Systems.ID == "" {
		return nil, fmt.Errorf("%w: the service root %s lists no Systems", ErrNotRedfish, c.endpoint+serviceRootPath)
	}
	return &root, nil
}

func (c *Client) useBasic() {
	c.mu.Lock()
	c.basic, c.token = true, ""
	c.mu.Unlock()
}

// login creates a session and keeps its token and URL.
func (c *Client) login(ctx context.Context) error {
	c.mu.Lock()
	sessions := c.root.Links.Sessions.ID
	c.token, c.basic = "", false
	c.mu.Unlock()
	creds := c.opts.Credentials
	r := request{method: http.MethodPost, path: sessions, body: map[string]string{"UserName": creds.Username, "Password": creds.Password},
		login: true}
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	if resp, err = c.check(r.method, r.path, resp); err != nil {
		return err
	}
	token := resp.header.Get("X-Auth-Token")
	if token == "" {
		return &Error{Method: r.method, Path: r.path, StatusCode: resp.status, Message: "the session was created without an X-Auth-Token"}
	}
	location := localPath(resp.header.Get("Location"))
	c.mu.Lock()
	c.token, c.sessionURL = token, location
	c.mu.Unlock()
	c.progress(StepAuth, "logged in to %s with a session", c.endpoint)
	return nil
}
