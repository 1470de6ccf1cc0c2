-- Warden for vim.lsp.config / vim.lsp.enable (Neovim 0.11+):
--
--   vim.lsp.enable('warden')
--
-- gives the same client as require('warden').setup{} (its options, if setup
-- ran first, apply here too): approvals through vim.ui.select, patch review,
-- progress for require('warden').status().
local warden = require('warden')
local cfg = warden.client_config(nil)
cfg.root_dir = nil
cfg.workspace_folders = nil
cfg.root_markers = warden.config.root_markers
cfg.filetypes = warden.config.filetypes
return cfg
