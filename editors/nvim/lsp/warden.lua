-- Warden for vim.lsp.config / vim.lsp.enable (Neovim 0.11+):
--
--   vim.lsp.enable('warden')
--
-- gives the same client as require('warden').setup{} (its options, if setup
-- ran first, apply here too): approvals through vim.ui.select, patch review,
-- progress for require('warden').status().
local warden = require('warden')
local cfg = warden.client_config(nil)
-- The root as setup's client finds it; none (no client) for Warden's own
-- files, whose workspace would be Warden's own state or config directory.
cfg.root_dir = function(bufnr, on_dir)
  if not warden.own_file(vim.api.nvim_buf_get_name(bufnr)) then
    on_dir(warden.root_dir(bufnr))
  end
end
cfg.workspace_folders = nil
cfg.filetypes = warden.config.filetypes
return cfg
