"""Neural machine translation on fairseq: data with language tags, plugins, training, decoding."""
