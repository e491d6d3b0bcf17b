package apiv1

// PathUser is DELETE: forget a user — every memory of user_id, in every tier the node keeps.
const PathUser = "/v1/users/{user_id}"

// ForgetResponse is the answer to DELETE /v1/users/{user_id}.
type ForgetResponse struct {
	UserID  string `json:"user_id"`
	Deleted int    `json:"deleted"` // memories removed
}
