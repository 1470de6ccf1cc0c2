-- The statusline component is redrawn when the client attaches: it shows
-- "warden" without waiting for a keystroke or another redraw.
local H = require('helpers')

H.run('statusline redrawn on attach', function()
  local ws = H.workspace({ ['main.go'] = 'package main' })
  H.setup()
  local drawn = {}
  _G.WardenStatusTest = function()
    local s = require('warden').status()
    table.insert(drawn, s)
    return s
  end
  vim.o.laststatus = 2
  vim.o.statusline = '%{v:lua.WardenStatusTest()}'
  vim.cmd('redrawstatus!')
  H.eq('', drawn[#drawn], 'status drawn before any client')

  H.open(ws .. '/main.go')
  -- Nothing else redraws here: headless Neovim inside vim.wait only runs
  -- callbacks, so a "warden" on screen is the plugin's own redraw.
  H.wait(5000, function()
    return drawn[#drawn] == 'warden'
  end, 'the statusline to show warden after attach (drawn: ' .. vim.inspect(drawn) .. ')')
end)
