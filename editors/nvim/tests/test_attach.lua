-- The client starts from setup{}, attaches to files of several languages in one workspace, sends its
-- settings as initializationOptions and on workspace/didChangeConfiguration, and declares lens refresh.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  T.bootstrap({ settings = { topK = 3 } })
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.set('filetype', vim.bo[buf].filetype)
  T.set('client_name', client.name)
  T.set('root_dir', client.root_dir)
  T.set('init_options', client.config.init_options)
  T.set('refresh_support', vim.tbl_get(client.capabilities, 'workspace', 'codeLens', 'refreshSupport'))
  T.set('lens_provider', client.server_capabilities.codeLensProvider ~= nil)

  local status = T.indexed(client)
  T.set('files', status.files)
  T.set('initial_top_k', status.roots[1].settings.topK)

  require('rag_lsp').update_settings({ topK = 2 })
  local updated = T.wait('topK 2 to reach the server', function()
    local _, result = T.request(client, 'ragLsp/status', vim.empty_dict())
    return result and result.roots[1].settings.topK == 2 and result
  end)
  T.set('updated_top_k', updated.roots[1].settings.topK)

  local go = T.open('cmd/report/main.go')
  local go_client = T.attached(go)
  T.set('go_filetype', vim.bo[go].filetype)
  T.set('same_client', go_client.id == client.id)
  T.set('clients', #vim.lsp.get_clients({ name = 'rag_lsp' }))
  T.set('server_pids', T.children())
end)
