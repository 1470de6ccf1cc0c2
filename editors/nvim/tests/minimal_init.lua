-- Minimal init for the headless tests: only Neovim's runtime and this plugin.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
vim.opt.runtimepath = { root, vim.env.VIMRUNTIME }
vim.opt.packpath = {}
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.more = false
package.path = root .. '/tests/?.lua;' .. package.path
vim.cmd('runtime plugin/warden.lua')
