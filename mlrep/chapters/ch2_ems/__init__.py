"""Chapter 2 (EMS): what belongs to this chapter only: its runs (`runs`) and its verbs (`cli`,
``mlrep ch2 …``). The sentence encoder, objectives and training are `mlrep.embed`'s."""
