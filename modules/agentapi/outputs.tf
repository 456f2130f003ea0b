output "task_app_id" {
  description = "The ID of the web app, for coder_ai_task.app_id. Empty when no web app is created."
  value       = try(coder_app.web[0].id, "")
}

output "scripts" {
  description = "The `coder exp sync` names of the coder_scripts that run at start, in their run order (install, then start), as the registry's coder-utils lists them: another module's script can wait for this one with `coder exp sync want <its name> <each of these>`."
  value       = [local.sync_names.install, local.sync_names.start]
}

output "start_settings" {
  description = "The whole document the install and start scripts receive (embedded gzip+base64 in the start coder_script): this layer's part as \"layer\", the caller's as \"agent\"."
  value       = local.start_document
}

output "stop_settings" {
  description = "The whole document the stop script receives (embedded gzip+base64 in the stop coder_script): this layer's part as \"layer\", the caller's as \"agent\"."
  value       = local.stop_document
}

output "install_script" {
  description = "The rendered install coder_script."
  value       = local.install_wrapper
}

output "start_script" {
  description = "The rendered start coder_script."
  value       = local.start_wrapper
}

output "stop_script" {
  description = "The rendered stop coder_script."
  value       = local.stop_wrapper
}

output "install_script_id" {
  description = "The ID of the install coder_script, which Coder also uses as the ID of its log source."
  value       = coder_script.install.id
}

output "start_script_id" {
  description = "The ID of the start coder_script, which Coder also uses as the ID of its log source."
  value       = coder_script.start.id
}

output "stop_script_id" {
  description = "The ID of the stop coder_script, which Coder also uses as the ID of its log source."
  value       = coder_script.stop.id
}
