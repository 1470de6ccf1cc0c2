-- :checkhealth warden against the real binary: found, version, doctor, model.
local H = require('helpers')

local health_text = H.health_text

H.run('checkhealth warden', function()
  H.workspace()
  H.setup()
  local text = health_text()
  H.contains(text, 'found ' .. H.bin(), 'binary')
  H.contains(text, 'version: ', 'version')
  H.contains(text, 'Warden: sandbox (warden doctor)', 'doctor section')
  local doctor = vim.fn.system({ H.bin(), 'doctor', '--json' })
  if vim.v.shell_error == 2 then
    H.contains(text, 'has no `doctor` command', 'no doctor yet')
  else
    local rep = vim.json.decode(doctor).sandbox
    if rep.refused and rep.refused ~= '' then
      H.contains(text, 'sandboxed commands are refused on this machine', 'doctor: refused')
    else
      H.health_ok(text, 'sandbox: ' .. rep.mechanism .. '; self-test: ', 'doctor: mechanism and self-test')
    end
    for _, layer in ipairs(rep.layers) do
      H.contains(text, layer.name .. ': ' .. (layer.enforced and 'enforced' or 'NOT enforced'), 'doctor layer ' .. layer.name)
    end
  end
  H.contains(text, 'no model configured', 'model missing')
  H.contains(text, 'no Warden client is running', 'no client yet')
  -- No config.toml: said so, never "OK config: <a file that is not there>";
  -- the default read policy is a choice, not a gap of this machine.
  H.health_ok(text, 'no config.toml (' .. vim.env.XDG_CONFIG_HOME .. '/warden/config.toml): defaults', 'no config.toml')
  H.truthy(not text:find('not enforced here: reads outside', 1, true), 'the read policy listed as not enforced:\n' .. text)

  -- A model named in config.toml is found.
  vim.fn.writefile({ '[model]', 'name = "qwen-test"', 'base_url = "http://127.0.0.1:9/v1"' }, vim.env.XDG_CONFIG_HOME .. '/warden/config.toml')
  text = health_text()
  H.contains(text, 'model "qwen-test" at http://127.0.0.1:9/v1', 'model from config.toml')
  H.health_ok(text, 'config: ' .. vim.env.XDG_CONFIG_HOME .. '/warden/config.toml', 'config.toml found')

  -- A missing binary is an error that says how to fix it.
  require('warden').setup({ cmd = { 'warden-does-not-exist', 'serve' } })
  text = health_text()
  H.contains(text, '"warden-does-not-exist" not found', 'missing binary')
  H.contains(text, 'make build', 'fix hint')

  -- :help warden works with the plugin on the runtimepath (README's set-up),
  -- and the shipped doc/tags is what :helptags makes of doc/warden.txt.
  vim.cmd('help warden')
  H.eq('help', vim.bo.buftype, ':help warden opened help')
  H.truthy(vim.api.nvim_buf_get_name(0):match('doc/warden%.txt$'), ':help warden shows warden.txt')
  H.contains(vim.api.nvim_get_current_line(), '*warden*', 'on the warden tag')
  vim.cmd('helpclose')
  local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
  local copy = vim.fn.tempname()
  vim.fn.mkdir(copy, 'p')
  vim.fn.writefile(vim.fn.readfile(root .. '/doc/warden.txt'), copy .. '/warden.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(copy))
  H.eq(vim.fn.readfile(copy .. '/tags'), vim.fn.readfile(root .. '/doc/tags'), 'doc/tags is up to date (run :helptags editors/nvim/doc)')
end)
