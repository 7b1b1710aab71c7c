-- The audit log filtered by action (GET /api/v1/audit-log?action=), newest first: one index
-- range per workspace and action instead of a scan of the workspace's whole trail.
CREATE INDEX "audit_log_workspace_id_action_created_at_idx" ON "audit_log"("workspace_id", "action", "created_at");
