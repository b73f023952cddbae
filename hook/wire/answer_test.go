package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Every kind of child is written without its status, whatever it holds,
// and with the rest of it: a kind with a status that withoutStatus does not
// know fails here.
func TestAnswerWritesNoStatus(t *testing.T) {
	kinds := reflect.TypeFor[Children]()
	for i := range kinds.NumField() {
		elem := kinds.Field(i).Type.Elem().Elem() // map[string]*T -> T
		obj := reflect.New(elem)
		obj.Elem().FieldByName("ObjectMeta").FieldByName("Name").SetString("n")
		if status := obj.Elem().FieldByName("Status"); status.IsValid() {
			// A status with something in it: omitempty alone would not drop it.
			status.Set(reflect.New(status.Type()).Elem())
			if f := status.FieldByName("ObservedGeneration"); f.IsValid() {
				f.SetInt(3)
			}
		}
		b, err := json.Marshal(SyncResponse{Children: []Child{obj.Interface()}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Children []map[string]any `json:"children"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		child := got.Children[0]
		if _, ok := child["status"]; ok {
			t.Errorf("%s is answered with its status: %s", elem.Name(), b)
		}
		if name, _ := child["metadata"].(map[string]any)["name"].(string); name != "n" {
			t.Errorf("%s is answered without its metadata: %s", elem.Name(), b)
		}
	}
}
