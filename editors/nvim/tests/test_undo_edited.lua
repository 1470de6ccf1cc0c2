-- A patch the user edited in the review before accepting it ("applied as you
-- edited it") is undone like any other: undo restores the file as it was
-- before the agent, and a second undo says the change was undone already.
local H = require('helpers')

local ends, errors = {}, {}

local function wait_end(what, fn)
  local n = #ends
  fn()
  H.wait(20000, function()
    return #ends > n
  end, what)
  return ends[#ends].message or ''
end

H.run('patch review: an edited patch is undone, once', function()
  local ws = H.workspace({ ['b.txt'] = 'one\ntwo' })
  H.setup()
  H.open(ws .. '/b.txt')
  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(errors, r.message)
  end
  H.collect_job_ends(ends)

  H.on_review(function(s)
    s:set_proposed(1, { 'one', 'two, as I wrote it' })
    s:accept_all()
  end)
  local msg = wait_end('the patch job to end', function()
    local res, err = H.execute('warden.patch.apply', {
      { patch = '*** Begin Patch\n*** Update File: b.txt\n@@\n-two\n+two, agent\n*** End Patch\n', root = ws },
    })
    H.eq(nil, err, 'warden.patch.apply error')
    H.truthy(res and res.jobId, 'a job was started')
  end)
  H.eq({ 'one', 'two, as I wrote it' }, H.read(ws .. '/b.txt'), 'applied as the user edited it')
  H.contains(msg, 'applied as the user edited it', 'the server saw the edited change land')

  H.on_review(function(s)
    s:accept_all()
  end)
  H.contains(wait_end('undo to end', function()
    vim.cmd('Warden undo')
  end), 'undid', 'the edited change is undone')
  H.eq({ 'one', 'two' }, H.read(ws .. '/b.txt'), 'b.txt as before the agent')

  H.contains(wait_end('the second undo to end', function()
    vim.cmd('Warden undo')
  end), 'already undone', 'a second undo says the change was undone already')
end)
