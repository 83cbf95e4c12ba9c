package redfishtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
)

// mutationRefused applies the transient refusals of the profile to an action or PATCH: the
// first one while "busy", and 409s after a power-off.
func (b *BMC) mutationRefused(w http.ResponseWriter) bool {
	p := b.cfg.Profile
	if p.BusyMessageID != "" && !b.busyUsed {
		b.busyUsed = true
		b.writeError(w, http.StatusBadRequest, p.BusyMessageID, "The system is busy; retry the operation later.")
		return true
	}
	if b.conflicts > 0 {
		b.conflicts--
		b.writeError(w, http.StatusConflict, "Base.1.8.ResourceInUse",
			"The change could not be made because the resource is in use or in transition.")
		return true
	}
	return false
}

func (b *BMC) post(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	ref, ok := b.actions[path]
	if !ok {
		b.writeError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "No action at "+path+".")
		return
	}
	if b.mutationRefused(w) {
		return
	}
	if b.cfg.Profile.TaskMonitor {
		// Run it now, answer 202, and let the monitor give the answer later.
		rec := httptest.NewRecorder()
		b.runAction(rec, ref, body)
		b.startTask(w, rec)
		return
	}
	b.runAction(w, ref, body)
}

func (b *BMC) runAction(w http.ResponseWriter, ref actionRef, body []byte) {
	var args map[string]any
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &args); err != nil {
			b.writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
			return
		}
	}
	var status int
	var refusal resource
	switch ref.kind {
	case "#VirtualMedia.InsertMedia":
		status, refusal = b.insertAction(ref.owner, args)
	case "#VirtualMedia.EjectMedia":
		if args == nil && b.cfg.Profile.EjectEmptyBodyStatus != 0 {
			status, refusal = b.cfg.Profile.EjectEmptyBodyStatus, b.errorBody("Base.1.8.MalformedJSON", "The request body is missing.")
		} else {
			b.ejectSlot(ref.owner)
		}
	case "#ComputerSystem.Reset":
		status, refusal = b.reset(ref.owner, args)
	default:
		status, refusal = http.StatusBadRequest, b.errorBody("Base.1.8.ActionNotSupported",
			"The action "+ref.kind+" is not supported by the fake.")
	}
	if refusal != nil {
		writeJSON(w, status, refusal, nil)
		return
	}
	if b.cfg.Profile.SuccessErrorBodies {
		writeJSON(w, http.StatusOK,
			resource{"error": resource{"code": "iLO.0.10.ExtendedInfo", "message": "See @Message.ExtendedInfo for more information.",
				"@Message.ExtendedInfo": []any{resource{"MessageId": "Base.1.4.Success"}}}}, nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// insertAction checks InsertMedia parameters as the profile's BMC does.
func (b *BMC) insertAction(slot string, args map[string]any) (int, resource) {
	p := b.cfg.Profile
	for _, f := range p.RejectInsertFields {
		if _, ok := args[f]; ok {
			return http.StatusBadRequest, b.errorBody("Base.1.8.ActionParameterNotSupported",
				"The parameter "+f+" for the action InsertMedia is not supported on the target resource.", "#/"+f)
		}
	}
	for _, f := range p.RequireInsertFields {
		if _, ok := args[f]; !ok {
			return http.StatusBadRequest, b.errorBody("Base.1.8.ActionParameterMissing",
				"The action InsertMedia requires the parameter "+f+" to be present in the request body.", "#/"+f)
		}
	}
	image, _ := args["Image"].(string)
	if image == "" {
		return http.StatusBadRequest, b.errorBody("Base.1.8.ActionParameterMissing",
			"The action InsertMedia requires the parameter Image to be present in the request body.", "#/Image")
	}
	return b.insertSlot(slot, image)
}

// insertSlot puts image into the slot, after the checks every profile's BMC makes.
func (b *BMC) insertSlot(path, image string) (int, resource) {
	p := b.cfg.Profile
	for _, s := range p.Slots {
		if strings.HasSuffix(path, "/"+s.ID) && s.RefuseInsert != 0 {
			return s.RefuseInsert, b.errorBody("Base.1.8.ActionNotSupported", "The slot "+s.ID+" cannot take remote images.")
		}
	}
	slot := b.tree[path]
	if inserted, _ := slot["Inserted"].(bool); inserted && slot["ConnectedVia"] != "NotConnected" {
		return http.StatusBadRequest, b.errorBody("Base.1.8.ResourceInUse", "Media is already inserted in "+path+"; eject it first.")
	}
	if p.RefuseHTTPSImages && strings.HasPrefix(strings.ToLower(image), "https:") {
		return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyValueNotInList",
			"The value of TransferProtocolType is not supported: HTTPS images cannot be mounted.", "#/Image")
	}
	if p.RequireISOName && (strings.Contains(image, "?") || !strings.HasSuffix(strings.ToLower(image), ".iso")) {
		return http.StatusBadRequest, b.errorBody("IDRAC.2.9.RAC0720",
			"Unable to mount remote share: the image file name must end in .iso and carry no query.", "#/Image")
	}
	if b.cfg.FetchDir != "" {
		file, err := b.fetch(image)
		var refused *fetchStatusError
		switch {
		case err != nil && b.cfg.Profile.GeneralErrorBodies && errors.As(err, &refused):
			// sushy-tools' BaseDriver._get_image (resources/vmedia.py): 400, or 502 when the
			// image server failed.
			status := http.StatusBadRequest
			if refused.code >= 500 {
				status = http.StatusBadGateway
			}
			return status, b.errorBody(generalError, fmt.Sprintf("Cannot download virtual media: got error %d from the server", refused.code))
		case err != nil && b.cfg.Profile.GeneralErrorBodies:
			// The same function turns any other failure into a 500 naming the URL.
			return http.StatusInternalServerError, b.errorBody(generalError, fmt.Sprintf("Failed fetching image from URL %s: %v", image, err))
		case err != nil:
			return http.StatusBadRequest, b.errorBody("Base.1.8.ResourceAtUriUnauthorized",
				fmt.Sprintf("Unable to access the image at %s: %v", image, err), "#/Image")
		}
		b.fetched[path] = file
	}
	b.remember(path)
	slot["Image"], slot["ImageName"], slot["Inserted"], slot["ConnectedVia"] = image, imageName(image), true, "URI"
	return 0, nil
}

// remember keeps the slot's current state to show for the profile's stale reads.
func (b *BMC) remember(path string) {
	if n := b.cfg.Profile.StaleReads; n > 0 {
		old := resource{}
		for k, v := range b.tree[path] {
			old[k] = v
		}
		b.stale[path] = staleView{old: old, reads: n}
	}
}

func (b *BMC) ejectSlot(path string) {
	slot := b.tree[path]
	b.remember(path)
	slot["Inserted"], slot["ConnectedVia"] = false, "NotConnected"
	switch {
	case b.cfg.Profile.SlotEmptyAsStrings:
		// sushy-tools' StaticDriver.eject_image (resources/vmedia.py) blanks the strings.
		slot["Image"], slot["ImageName"], slot["WriteProtected"], slot["ConnectedVia"] = "", "", false, "URI"
	case !b.cfg.Profile.KeepImageAfterEject:
		slot["Image"], slot["ImageName"] = nil, nil
	}
	delete(b.fetched, path)
}

func (b *BMC) patch(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	res := b.tree[path]
	if res == nil {
		b.writeError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
		return
	}
	if b.preconditionFails(r, path) {
		b.writeError(w, http.StatusPreconditionFailed, "Base.1.8.PreconditionFailed",
			"The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	if b.mutationRefused(w) {
		return
	}
	var args map[string]any
	if err := json.Unmarshal(body, &args); err != nil {
		b.writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	var status int
	var refusal resource
	switch {
	case res["MediaTypes"] != nil:
		status, refusal = b.patchSlot(path, args)
	case args["Boot"] != nil:
		status, refusal = b.patchBoot(path, args["Boot"])
	default:
		status, refusal = http.StatusBadRequest, b.errorBody("Base.1.8.PropertyNotWritable", "The fake changes only Boot and virtual media.")
	}
	if refusal != nil {
		writeJSON(w, status, refusal, nil)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (b *BMC) patchSlot(path string, args map[string]any) (int, resource) {
	image, hasImage := args["Image"]
	inserted, _ := args["Inserted"].(bool)
	if s, ok := image.(string); ok && s != "" && (inserted || args["Inserted"] == nil) {
		return b.insertSlot(path, s)
	}
	if hasImage && image == nil || args["Inserted"] == false {
		b.ejectSlot(path)
		return 0, nil
	}
	return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyValueIncorrect",
		"Set Image and Inserted to insert, or Image null and Inserted false to eject.", "#/Image")
}

var bootModes = []string{"UEFI", "Legacy"}

func (b *BMC) patchBoot(path string, v any) (int, resource) {
	p := b.cfg.Profile
	boot, ok := v.(map[string]any)
	if !ok {
		return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyValueTypeError", "Boot must be an object.", "#/Boot")
	}
	if p.SettingsObject && !strings.HasSuffix(path, "/Settings") {
		return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyNotWritable",
			"Boot is read-only here: change it through the settings object.", "#/Boot")
	}
	_, hasTarget := boot["BootSourceOverrideTarget"]
	_, hasEnabled := boot["BootSourceOverrideEnabled"]
	if p.RequireTargetWithEnabled && hasTarget != hasEnabled {
		return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyMissing",
			"BootSourceOverrideTarget and BootSourceOverrideEnabled must be set together.", "#/Boot/BootSourceOverrideEnabled")
	}
	if _, hasMode := boot["BootSourceOverrideMode"]; hasMode && p.RejectBootMode {
		return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyNotWritable",
			"The property BootSourceOverrideMode is a read only property and cannot be assigned a value.", "#/Boot/BootSourceOverrideMode")
	}
	system := b.tree[strings.TrimSuffix(path, "/Settings")]
	current, _ := system["Boot"].(resource)
	allowed, _ := current["BootSourceOverrideTarget@Redfish.AllowableValues"].([]any)
	checks := map[string][]any{"BootSourceOverrideTarget": allowed,
		"BootSourceOverrideEnabled": toAny([]string{"Disabled", "Once", "Continuous"}), "BootSourceOverrideMode": toAny(bootModes)}
	for key, value := range boot {
		valid, known := checks[key]
		if !known {
			return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyUnknown",
				"The property "+key+" is not in the list of valid properties for the resource.", "#/Boot/"+key)
		}
		if len(valid) > 0 && !slices.Contains(valid, value) {
			return http.StatusBadRequest, b.errorBody("Base.1.8.PropertyValueNotInList",
				fmt.Sprintf("The value %v for the property %s is not in the list of acceptable values.", value, key), "#/Boot/"+key)
		}
	}
	if p.SkipsBootOverride {
		return http.StatusOK, resource{"@Message.ExtendedInfo": []any{resource{"MessageId": "Base.1.8.PropertyNotWritable",
			"Message":           "The property BootSourceOverrideTarget is a read only property and cannot be assigned a value.",
			"RelatedProperties": []any{"#/Boot/BootSourceOverrideTarget"}, "Severity": "Warning"}}}
	}
	target := b.tree[path]["Boot"].(resource)
	for key, value := range boot {
		target[key] = value
	}
	if p.ContinuousOverrides {
		// sushy-tools sets the boot device and ignores BootSourceOverrideEnabled (main.py
		// system_resource: "we always set the boot device frequency to continuous").
		target["BootSourceOverrideEnabled"] = "Continuous"
	}
	return 0, nil
}
