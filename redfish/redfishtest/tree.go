package redfishtest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// resource is a Redfish resource as its JSON object.
type resource = map[string]any

const root = "/redfish/v1"

func link(path string) resource { return resource{"@odata.id": path} }

func links(paths ...string) []any {
	out := make([]any, len(paths))
	for i, p := range paths {
		out[i] = link(p)
	}
	return out
}

// generateTree builds the resources of a Profile.
func generateTree(p Profile) map[string]resource {
	t := map[string]resource{}
	sys := root + "/Systems/" + p.SystemID
	mgr := root + "/Managers/" + p.ManagerID
	rootRes := resource{"@odata.id": root + "/", "Id": "RootService", "RedfishVersion": "1.15.0",
		"Systems": link(root + "/Systems"), "Managers": link(root + "/Managers")}
	if !p.NoSessions {
		rootRes["SessionService"] = link(root + "/SessionService")
		rootRes["Links"] = resource{"Sessions": link(root + "/SessionService/Sessions")}
		t[root+"/SessionService"] = resource{"@odata.id": root + "/SessionService", "Sessions": link(root + "/SessionService/Sessions")}
		t[root+"/SessionService/Sessions"] = resource{"@odata.id": root + "/SessionService/Sessions", "Members": []any{}}
	}
	t[root] = rootRes
	systems := []string{sys}
	for _, id := range p.OtherSystems {
		other := root + "/Systems/" + id
		systems = append(systems, other)
		t[other] = resource{"@odata.id": other, "Id": id, "PowerState": "Off",
			"Boot":  resource{"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"},
			"Links": resource{"ManagedBy": links(mgr)}}
	}
	t[root+"/Systems"] = resource{"@odata.id": root + "/Systems", "Members": links(systems...)}
	t[root+"/Managers"] = resource{"@odata.id": root + "/Managers", "Members": links(mgr)}

	reset := resource{"target": sys + "/Actions/ComputerSystem.Reset"}
	if p.ResetActionInfo {
		reset["@Redfish.ActionInfo"] = sys + "/ResetActionInfo"
		t[sys+"/ResetActionInfo"] = resource{"@odata.id": sys + "/ResetActionInfo",
			"Parameters": []any{resource{"Name": "ResetType", "Required": true, "AllowableValues": toAny(p.ResetTypes)}}}
	} else {
		reset["ResetType@Redfish.AllowableValues"] = toAny(p.ResetTypes)
	}
	boot := resource{"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideMode": "UEFI",
		"BootSourceOverrideTarget@Redfish.AllowableValues": toAny(p.BootTargets)}
	if p.ContinuousOverrides {
		// sushy-tools' fake driver starts on the disk (fakedriver.py get_boot_device).
		boot["BootSourceOverrideTarget"], boot["BootSourceOverrideEnabled"] = "Hdd", "Continuous"
	}
	system := resource{"@odata.id": sys, "Id": p.SystemID, "PowerState": "Off", "Boot": boot,
		"Actions": resource{"#ComputerSystem.Reset": reset},
		"Links":   resource{"ManagedBy": links(mgr)}}
	if p.SystemName != "" {
		system["Name"] = p.SystemName
	}
	if p.SystemUUID != "" {
		system["UUID"] = p.SystemUUID
	}
	if p.SettingsObject {
		system["@Redfish.Settings"] = resource{"SettingsObject": link(sys + "/Settings")}
		t[sys+"/Settings"] = resource{"@odata.id": sys + "/Settings", "Boot": resource{}}
	}
	manager := resource{"@odata.id": mgr, "Id": p.ManagerID}
	media := sys + "/VirtualMedia"
	if p.MediaUnderManager {
		media = mgr + "/VirtualMedia"
		manager["VirtualMedia"] = link(media)
	} else {
		system["VirtualMedia"] = link(media)
		if p.ManagerLinksSystemMedia {
			manager["VirtualMedia"] = link(media)
		}
	}
	t[sys], t[mgr] = system, manager
	var members []string
	for _, s := range p.Slots {
		path := media + "/" + s.ID
		members = append(members, path)
		slot := resource{"@odata.id": path, "Id": s.ID, "Name": "Virtual " + s.ID, "MediaTypes": toAny(s.MediaTypes),
			"Image": nil, "ImageName": nil, "Inserted": false, "WriteProtected": true, "ConnectedVia": "NotConnected"}
		if p.SlotEmptyAsStrings {
			slot["Image"], slot["ImageName"], slot["WriteProtected"], slot["ConnectedVia"] = "", "", false, "URI"
		}
		if s.Image != "" {
			slot["Image"], slot["ImageName"], slot["Inserted"], slot["ConnectedVia"] = s.Image, imageName(s.Image), true, "URI"
		}
		if !s.NoActions {
			suffix := ""
			if p.TrailingSlash {
				suffix = "/"
			}
			slot["Actions"] = resource{
				"#VirtualMedia.InsertMedia": resource{"target": path + "/Actions/VirtualMedia.InsertMedia" + suffix},
				"#VirtualMedia.EjectMedia":  resource{"target": path + "/Actions/VirtualMedia.EjectMedia" + suffix},
			}
		}
		t[path] = slot
	}
	t[media] = resource{"@odata.id": media, "Members": links(members...)}
	return t
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// loadMockup reads a DMTF mockup: the resource at /redfish/v1/X/Y is X/Y/index.json.
func loadMockup(dir string) (map[string]resource, error) {
	t := map[string]resource{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "index.json" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var r resource
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		key := root
		if rel != "." {
			key += "/" + filepath.ToSlash(rel)
		}
		t[key] = r
		return nil
	})
	if err == nil && t[root] == nil {
		err = fmt.Errorf("%s has no index.json at its top: not a Redfish mockup", dir)
	}
	return t, err
}

// MockupDir returns the DMTF mockup tree name (e.g. "public-rackmount1") from
// $SNO_ISO_REDFISH_MOCKUPS or ../shared/fixtures/redfish beside the repository; without it the
// test ends through testenv.Missing, saying where it looked.
func MockupDir(t testing.TB, name string) string {
	t.Helper()
	base := os.Getenv("SNO_ISO_REDFISH_MOCKUPS")
	if base == "" {
		_, self, _, _ := runtime.Caller(0)
		base = filepath.Join(filepath.Dir(self), "..", "..", "..", "shared", "fixtures", "redfish")
	}
	dir := filepath.Join(base, name)
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		testenv.Missing(t, "Redfish mockup %s not found in %s; set SNO_ISO_REDFISH_MOCKUPS to the directory of the DMTF mockups", name, base)
	}
	return dir
}

func imageName(url string) string {
	return url[strings.LastIndex(url, "/")+1:]
}
